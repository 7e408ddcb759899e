package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
)

func init() { register("sign", newSignCmd) }

type signOptions struct {
	io     *IO
	bundle string
	key    string
}

func newSignCmd(io *IO) *cobra.Command {
	o := &signOptions{io: io}
	cmd := &cobra.Command{
		Use:   "sign BUNDLE --key KEY",
		Short: "Sign a bundle (Sigstore bundle v0.3, DSSE, in-toto) as an OCI referrer",
		Long: `sign checks every blob of BUNDLE, then signs its in-toto statement (subjects:
the run manifest digest and every layer digest; predicate type
https://benchseal.dev/attestation/run/v1) as a DSSE envelope in a Sigstore
bundle v0.3. The signature is added inside the layout as an OCI referrer of the
run manifest (the shape cosign uses) and written beside it as
BUNDLE.sigstore.json for 'cosign verify-blob-attestation'. Earlier signatures
are kept: a publisher and a reviewer can each sign. KEY is a benchseal or
cosign private key; its password comes from BENCHSEAL_PASSWORD or a prompt.`,
		Example: `  benchseal sign run.tar --key reviewer.key`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			return runSign(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.key, "key", "", "private key file (required)")
	cmd.MarkFlagRequired("key")
	return cmd
}

func runSign(ctx context.Context, o *signOptions) error {
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
}
