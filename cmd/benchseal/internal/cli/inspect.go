package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/opencontainers/go-digest"
	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

type inspectOptions struct {
	io        *IO
	bundle    string
	statement bool
	extract   string
	out       string
}

func newInspectCmd(io *IO) *cobra.Command {
	o := &inspectOptions{io: io}
	cmd := &cobra.Command{
		Use:   "inspect BUNDLE [--statement | --extract-reproduction DIGEST --out PATH]",
		Short: "Show what a bundle holds, without trusting it",
		Long: `inspect prints the run id, the manifest essentials, the layers with their
stored and uncompressed sizes and digests, and the signatures with their key
fingerprints (as the bundles claim them: nothing is verified — use
'benchseal verify'). The bundle's structure is still checked safely on open.
--statement prints instead the in-toto statement benchseal signs for this
bundle, e.g. for 'cosign attest-blob --statement'.

Reproduction referrers (a reviewer's reproduction run the bundle carries,
see 'benchseal attest --attach-reproduction') are listed with their run
manifest and manifest.json digests. --extract-reproduction DIGEST --out PATH
writes the one whose run manifest is DIGEST as a bundle of its own (a
directory, or a tar when PATH ends in .tar), every blob digest-checked, for
'benchseal verify' or 'benchseal replay'.`,
		Example: `  benchseal inspect run.tar
  benchseal inspect run.tar --statement > statement.json
  benchseal inspect run.tar --extract-reproduction sha256:... --out repro.tar`,
		Args: exactArgs(1, "one bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			if (o.extract == "") != (o.out == "") {
				return usagef("--extract-reproduction and --out go together")
			}
			if o.extract != "" && o.statement {
				return usagef("give one of --statement and --extract-reproduction")
			}
			return runInspect(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.statement, "statement", false, "print the in-toto statement that signing covers")
	cmd.Flags().StringVar(&o.extract, "extract-reproduction", "", "write the reproduction referrer with this run manifest digest as a bundle of its own (with --out)")
	cmd.Flags().StringVar(&o.out, "out", "", "with --extract-reproduction: where to write it (must not exist)")
	return cmd
}

func runInspect(ctx context.Context, o *inspectOptions) error {
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	b, err := artifact.Open(o.bundle)
	if err != nil {
		if errors.Is(err, artifact.ErrInvalid) {
			return rejected(err)
		}
		return err
	}
	defer b.Close()
	if o.extract != "" {
		if _, err := artifact.ParseDigest(o.extract); err != nil {
			return usagef("--extract-reproduction: %v", err)
		}
		d := digest.Digest(o.extract)
		if err := b.ExtractReproduction(ctx, d, o.out); err != nil {
			if errors.Is(err, artifact.ErrInvalid) {
				return rejected(err)
			}
			return err
		}
		fmt.Fprintf(o.io.Out, "extracted reproduction %s to %s\n", d, o.out)
		return nil
	}
	if o.statement {
		s, err := artifact.MarshalStatement(b.Statement())
		if err != nil {
			return err
		}
		fmt.Fprintf(o.io.Out, "%s\n", s)
		return nil
	}
	writeInspect(o.io.Out, b)
	writeInspectReproductions(o.io.Out, b)
	return nil
}

// writeInspect prints what b's manifest and index say about the run,
// its layers and referrers, checking no digest or signature.
func writeInspect(w io.Writer, b *artifact.Bundle) {
	m := b.Manifest()
	fmt.Fprintf(w, "run id     %s\n", m.RunID)
	if m.Title != "" {
		fmt.Fprintf(w, "title      %s\n", m.Title)
	}
	fmt.Fprintf(w, "manifest   %s (%d bytes)\n", b.RunDescriptor().Digest, b.RunDescriptor().Size)
	fmt.Fprintf(w, "created    %s\n", b.Created())
	fmt.Fprintf(w, "time       %s .. %s\n", m.StartTime, m.FinishTime)
	fmt.Fprintf(w, "evidence   %s\n", m.Evidence)
	// inspect checks no signature: nothing vouches beyond the signer.
	fmt.Fprintf(w, "           %s\n", schema.SignerStatement(m.Evidence, schema.Vouch{}))
	fmt.Fprintf(w, "model      %s\n", m.Model.Name)
	if m.Engine.Name != "" {
		fmt.Fprintf(w, "engine     %s %s\n", m.Engine.Name, m.Engine.Version)
	}
	fmt.Fprintf(w, "hardware   %s\n", m.HardwareSummary())
	fmt.Fprintf(w, "boundary   %s\n", m.Client.Boundary)
	var importer *schema.Build
	if m.Source != nil {
		importer = m.Source.Importer
	}
	fmt.Fprint(w, report.BuildsText(11, m.Client.Build, importer))
	writeInspectLoad(w, m)
	if m.Incomplete {
		fmt.Fprintf(w, "INCOMPLETE %s\n", m.IncompleteReason)
	}
	if m.Plan != nil {
		fmt.Fprintf(w, "plan       pre-registered plan sha256:%s\n", m.Plan.SHA256)
	} else {
		fmt.Fprintln(w, "plan       none: the run was not pre-registered")
	}
	writeInspectExternal(w, m.External)
	if len(m.Unknown) > 0 {
		fmt.Fprintf(w, "unknown    %d field(s) declared unknown: %s\n", len(m.Unknown), strings.Join(m.Unknown, ", "))
	}
	if c := b.Claims(); c != nil {
		n := 0
		for _, p := range c.Points {
			n += len(p.Metrics)
		}
		fmt.Fprintf(w, "claims     %d (definitions %s)\n", n, c.Definitions)
	}
	writeInspectLayers(w, b)
	writeInspectReferrers(w, b)
}

// writeInspectExternal prints the external evidence the run references, each
// result marked unverified; a phase of writeInspect kept apart for its
// size.
func writeInspectExternal(w io.Writer, external []schema.ExternalRef) {
	for _, x := range external {
		// External evidence is a reference, never a measurement of this run.
		fmt.Fprintf(w, "external   %s", x.Kind)
		for _, kv := range [][2]string{{"version", x.Version}, {"division", x.Division}, {"category", x.Category},
			{"scenario", x.Scenario}, {"status", x.Status}, {"submitter", x.Submitter}, {"system", x.System}} {
			if kv[1] != "" {
				fmt.Fprintf(w, " %s=%s", kv[0], kv[1])
			}
		}
		if x.AcceleratorCount > 0 {
			fmt.Fprintf(w, " accelerators=%d", x.AcceleratorCount)
		}
		if x.URL != "" {
			fmt.Fprintf(w, " %s", x.URL)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "           results %s:\n", x.UnverifiedLabel())
		for _, k := range slices.Sorted(maps.Keys(x.Results)) {
			fmt.Fprintf(w, "             %s = %s  UNVERIFIED\n", k, x.Results[k])
		}
	}
}

// writeInspectLayers lists b's layers with their sizes and digests, read
// from the manifest only; a phase of writeInspect kept apart for its size.
func writeInspectLayers(w io.Writer, b *artifact.Bundle) {
	fmt.Fprintf(w, "\nlayers (%d; their bytes are NOT read or checked here: run verify)\n", len(b.Layers()))
	for _, l := range b.Layers() {
		fmt.Fprintf(w, "  %-36s %10d bytes", l.Title, l.Descriptor.Size)
		if l.Compressed {
			fmt.Fprintf(w, " (%d bytes uncompressed)", l.UncompressedSize)
		}
		if l.Kind == artifact.KindRecords {
			fmt.Fprintf(w, " %d records", l.Records)
		}
		fmt.Fprintf(w, "\n    %s\n", l.Descriptor.Digest)
		if l.Compressed {
			fmt.Fprintf(w, "    uncompressed %s\n", l.UncompressedDigest)
		}
	}
}

// writeInspectReferrers lists b's signatures, signed plans, reviewer
// attestations and other referrers, none of them verified; a phase of
// writeInspect kept apart for its size.
func writeInspectReferrers(w io.Writer, b *artifact.Bundle) {
	listKeyed := func(title string, refs []artifact.Referrer, always bool) {
		if len(refs) == 0 && !always {
			return
		}
		fmt.Fprintf(w, "\n%s (%d, NOT verified here)\n", title, len(refs))
		for _, r := range refs {
			hint := "unreadable"
			if data, err := b.ReadSignature(r); err == nil {
				hint = signatureHint(data)
			}
			fmt.Fprintf(w, "  %s key %s\n", r.Descriptor.Digest, hint)
		}
	}
	listKeyed("signatures", b.ReferrersOf(artifact.PredicateTypeRun), true)
	listKeyed("signed plans", b.ReferrersOf(artifact.PredicateTypePlan), false)
	atts := b.ReferrersOf(artifact.PredicateTypeVSA)
	if len(atts) > 0 {
		fmt.Fprintf(w, "\nreviewer attestations (%d, NOT verified here)\n", len(atts))
		for _, r := range atts {
			a := verify.AttestationResult{Source: string(r.Descriptor.Digest), Reason: "unreadable"}
			if data, err := b.ReadSignature(r); err == nil {
				a = verify.DescribeAttestation(string(r.Descriptor.Digest), data)
			}
			fmt.Fprintf(w, "  %s key %s\n    verifier %s, verified %s, result %s, levels %s\n", a.Source, orDash(a.Hint),
				orDash(a.VerifierID), orDash(a.TimeVerified), orDash(a.Result), orDash(strings.Join(a.Levels, ",")))
		}
	}
	for _, r := range b.Referrers() {
		switch r.PredicateType() {
		case artifact.PredicateTypeRun, artifact.PredicateTypePlan, artifact.PredicateTypeVSA:
		default:
			fmt.Fprintf(w, "  other referrer %s: predicate type %s (not checked by benchseal)\n", r.Descriptor.Digest, r.PredicateType())
		}
	}
}

// signatureHint reads the unauthenticated public-key hint of a Sigstore
// bundle, as a fingerprint when it has that form.
func signatureHint(data []byte) string {
	if schema.CheckJSON(data) != nil {
		return "unreadable"
	}
	hint, ok := artifact.BundleKeyHint(data)
	if !ok {
		return "unknown"
	}
	if fp := artifact.HintFingerprint(hint); fp != "" {
		return fp
	}
	return "hint " + schema.EscapeText(hint, false) // unauthenticated: one line, escaped
}

// writeInspectLoad prints the load's shape and, for a trace replay, the
// trace and its sha256.
func writeInspectLoad(w io.Writer, m *schema.Manifest) {
	fmt.Fprintf(w, "load       %s, %d point(s) × %d repeat(s)\n", m.Load.Mode, len(m.Load.Points), m.Load.Repeats)
	if t := m.Workload.Trace.Summary(); t != "" {
		fmt.Fprintf(w, "trace      %s\n", t)
	}
	if t := m.Workload.Sessions.Summary(); t != "" {
		fmt.Fprintf(w, "sessions   %s\n", t)
	}
}

// writeInspectReproductions lists the reproduction referrers of b.
func writeInspectReproductions(w io.Writer, b *artifact.Bundle) {
	if rs := b.Reproductions(); len(rs) > 0 {
		fmt.Fprintf(w, "\nreproductions (%d, NOT verified here; extract with --extract-reproduction)\n", len(rs))
		for _, r := range rs {
			fmt.Fprintf(w, "  %s run %s\n    run manifest %s, manifest.json %s, %d layers\n", r.Descriptor.Digest,
				schema.EscapeText(r.RunID(), false), r.RunDescriptor.Digest, r.ManifestJSONDigest(), len(r.Layers))
		}
	}
}

// orDash returns s as one line of text output (EscapeText, newlines
// escaped: s is a publisher's string), or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return schema.EscapeText(s, false)
}
