package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/importer"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

type packOptions struct {
	io          *IO
	run         string
	out         string
	key         string
	maxProblems int
}

func newPackCmd(io *IO) *cobra.Command {
	o := &packOptions{io: io}
	cmd := &cobra.Command{
		Use:   "pack RUNDIR --out PATH [--key KEY]",
		Short: "Pack a run directory into a reproducible OCI bundle, optionally signed",
		Long: `pack validates RUNDIR (an invalid run is refused with the validation problems,
exit 3) and writes it as an OCI image layout: a directory, or a deterministic
tar when PATH ends in .tar. The layers are the manifest, the claims, the
workload, the records sharded by load point and repeat (zstd), and the
attachments. The same run gives byte-identical blobs and the same manifest
digest on any machine. org.opencontainers.image.created is SOURCE_DATE_EPOCH
when set, else the run's finish time; a run whose finish time is unknown (an
import whose source states no instant, e.g. vLLM's zone-less date) is refused
(exit 1) with the command that states it. The write is atomic and PATH must not
exist. With --key the bundle is signed as by 'benchseal sign'.`,
		Example: `  benchseal pack demo-run --out demo.tar
  SOURCE_DATE_EPOCH=1767225600 benchseal pack demo-run --out demo --key publisher.key`,
		Args: exactArgs(1, "one run directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.run = args[0]
			if o.maxProblems < 1 {
				return usagef("--max-problems must be ≥ 1")
			}
			return runPack(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "bundle to write: a directory, or a .tar file (required)")
	cmd.Flags().StringVar(&o.key, "key", "", "private key to sign the bundle with")
	cmd.Flags().IntVar(&o.maxProblems, "max-problems", 50, "report at most this many validation problems")
	cmd.MarkFlagRequired("out")
	return cmd
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH; zero time when unset.
func sourceDateEpoch(io *IO) (time.Time, error) {
	s := io.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, usagef("SOURCE_DATE_EPOCH must be a non-negative integer, got %q", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

func runPack(ctx context.Context, o *packOptions) error {
	if err := checkBundleOut(o.out); err != nil {
		return err
	}
	if err := refuseInputAsOut("--out", o.out, []string{o.run, o.key}); err != nil {
		return err
	}
	created, err := sourceDateEpoch(o.io)
	if err != nil {
		return err
	}
	// An undatable run is refused before the key is opened (a password
	// asked for nothing) and before the run is validated.
	if created.IsZero() {
		if rd, err := schema.OpenRunDir(o.run); err == nil && rd.Manifest().FinishTime == "" {
			return creationTimeHint(o, errcond.Errorf(artifact.ErrNoCreationTime, "pack %s: the run's finish_time is unknown, so the bundle's creation time cannot come from it", o.run), rd.Manifest())
		}
	}
	var signer *artifact.Signer
	if o.key != "" {
		if signer, err = loadSigner(o.io, o.key); err != nil {
			return err
		}
	}
	res, err := artifact.Pack(ctx, o.run, o.out, artifact.PackOptions{Created: created, MaxProblems: o.maxProblems, Signer: signer})
	reportReclaimed(o.io, resReclaimed(res))
	if err != nil {
		if errors.Is(err, schema.ErrInvalid) || errors.Is(err, artifact.ErrInvalid) {
			return rejected(err)
		}
		if errors.Is(err, artifact.ErrNoCreationTime) {
			if rd, rerr := schema.OpenRunDir(o.run); rerr == nil {
				return creationTimeHint(o, err, rd.Manifest())
			}
		}
		return err
	}
	fmt.Fprintf(o.io.Out, "packed %s\n  run dir    %s\n  manifest   %s\n  created    %s\n  layers     %d\n",
		res.Path, o.run, res.ManifestDigest, res.Created, len(res.Layers))
	if sig := res.Signature; sig != nil {
		printSigned(o.io, res.Path, sig)
	}
	return nil
}

// creationTimeHint completes err (artifact.ErrNoCreationTime) with the
// command that states the creation time: the source's local time without
// a zone read as UTC when the import kept one (the publisher's choice of
// zone, said as such), else the time of packing.
func creationTimeHint(o *packOptions, err error, m *schema.Manifest) error {
	cmd := "benchseal pack " + shellQuote(o.run) + " --out " + shellQuote(o.out)
	if o.key != "" {
		cmd += " --key " + shellQuote(o.key)
	}
	now := fmt.Sprintf("SOURCE_DATE_EPOCH=$(date +%%s) %s", cmd)
	if t, tool, ok := importer.UnzonedTime(m); ok {
		local := t.Format(time.DateTime)
		return fmt.Errorf("%w: state it with SOURCE_DATE_EPOCH (Unix seconds). %s's file dates the result %s, a local time without a zone, "+
			"so no instant: to date the bundle by that reading taken as UTC, run\n  SOURCE_DATE_EPOCH=$(date -ud '%s' +%%s) %s\n"+
			"or, to date it by the time of packing,\n  %s", err, tool, local, local, cmd, now)
	}
	return fmt.Errorf("%w: state it with SOURCE_DATE_EPOCH (Unix seconds); the run states no time, so date the bundle by the time of packing:\n  %s", err, now)
}

func resReclaimed(res *artifact.PackResult) []schema.Reclaimed {
	if res == nil {
		return nil
	}
	return res.Reclaimed
}

// reportReclaimed says which leftovers of killed runs were removed.
func reportReclaimed(io *IO, rs []schema.Reclaimed) {
	for _, r := range rs {
		fmt.Fprintf(io.ErrOut, "benchseal: removed stale staging %s\n", r)
	}
}

// shellQuote returns s as one POSIX shell word: unchanged when it holds
// only safe characters, else in single quotes.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@+,%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
