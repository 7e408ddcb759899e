package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

type signOptions struct {
	io             *IO
	bundle         string
	key            string
	sigstoreBundle string
}

func newSignCmd(io *IO) *cobra.Command {
	o := &signOptions{io: io}
	cmd := &cobra.Command{
		Use:   "sign BUNDLE (--key KEY | --sigstore-bundle FILE)",
		Short: "Sign a bundle (Sigstore bundle v0.3, DSSE, in-toto) as an OCI referrer",
		Long: `sign checks every blob of BUNDLE, then signs its in-toto statement (subjects:
the run manifest digest and every layer digest; predicate type
https://benchseal.dev/attestation/run/v1) as a DSSE envelope in a Sigstore
bundle v0.3. The signature is added inside the layout as an OCI referrer of the
run manifest (the shape cosign uses) and written beside it as
BUNDLE.sigstore.json for 'cosign verify-blob-attestation'. Earlier signatures
are kept: a publisher and a reviewer can each sign. When BUNDLE.sigstore.json
holds another key's signature it is kept too, and this key's detached copy is
BUNDLE.<key id>.sigstore.json (the first 16 hex digits of its fingerprint). KEY is a benchseal or
cosign private key; its password comes from BENCHSEAL_PASSWORD or a prompt.

--sigstore-bundle FILE attaches a signature made elsewhere instead — keyed
or keyless, e.g. 'cosign attest-blob --bundle FILE' over 'benchseal inspect
--statement' in a CI workflow — after checking that it signs exactly this
bundle's statement; or a signed pre-registered plan (PLAN.sigstore.json from
'benchseal plan sign') after checking that it is the plan the run's manifest
names, so the plan travels with the bundle as its own referrer. Its signature is checked by 'verify' against the key or
identity the reader trusts.`,
		Example: `  benchseal sign run.tar --key publisher.key
  benchseal sign run.tar --sigstore-bundle cosign.sigstore.json`,
		Args: exactArgs(1, "one bundle"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			if (o.key == "") == (o.sigstoreBundle == "") {
				return usagef("give exactly one of --key and --sigstore-bundle")
			}
			return runSign(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.key, "key", "", "private key file")
	cmd.Flags().StringVar(&o.sigstoreBundle, "sigstore-bundle", "", "attach this externally made Sigstore bundle over the bundle's statement")
	return cmd
}

func runSign(ctx context.Context, o *signOptions) error {
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	if o.sigstoreBundle != "" {
		return attachExternal(ctx, o.io, o.bundle, o.sigstoreBundle, "")
	}
	s, err := loadSigner(o.io, o.key)
	if err != nil {
		return err
	}
	return signAndReport(ctx, o.io, o.bundle, s)
}

func signAndReport(ctx context.Context, io *IO, path string, s *artifact.Signer) error {
	res, err := artifact.Sign(ctx, path, s)
	if err != nil {
		if errors.Is(err, artifact.ErrInvalid) {
			return rejected(err)
		}
		return err
	}
	reportReclaimed(io, res.Reclaimed)
	printSigned(io, path, res)
	return nil
}

func printSigned(io *IO, path string, res *artifact.SignResult) {
	fmt.Fprintf(io.Out, "signed %s\n  key        %s\n  referrer   %s\n  detached   %s\n", path, res.Fingerprint, res.Referrer.Digest, res.DetachedPath)
	if res.KeptDetached != "" {
		fmt.Fprintf(io.Out, "  kept       %s (another signer's detached signature)\n", res.KeptDetached)
	}
}

// attachExternal attaches an externally made Sigstore bundle of the given
// predicate type after verify.AttachExternal checked what it signs.
func attachExternal(ctx context.Context, io *IO, path, file, predicateType string) error {
	sb, err := readFileLimited("--sigstore-bundle", file, artifact.MaxSignatureBundleSize, sigstoreBundleWant)
	if err != nil {
		return err
	}
	d, pt, err := verify.AttachExternal(ctx, path, sb, predicateType)
	if err != nil {
		return rejected(err)
	}
	fmt.Fprintf(io.Out, "attached %s to %s\n  predicate  %s\n  referrer   %s\n  signature  not checked here: verify checks it against the key or identity you trust\n", file, path, pt, d)
	return nil
}

// writeAtomic writes a file readable by all, atomically.
func writeAtomic(path string, data []byte) error {
	return schema.WriteFileAtomic(path, data, 0o644)
}
