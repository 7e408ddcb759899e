package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/registry"
)

// registryFlags are the connection flags of push and pull.
type registryFlags struct {
	plainHTTP       bool
	username        string
	timeout         time.Duration
	responseTimeout time.Duration
}

func (f *registryFlags) bind(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.plainHTTP, "plain-http", false, "use HTTP instead of HTTPS (loopback test registries)")
	cmd.Flags().StringVar(&f.username, "username", "", "registry user name; the password comes from BENCHSEAL_REGISTRY_PASSWORD (default: credentials from the Docker config)")
	f.bindTimeouts(cmd.Flags(), "")
}

// bindTimeouts binds the registry timeouts, their help prefixed by pre.
func (f *registryFlags) bindTimeouts(fs *pflag.FlagSet, pre string) {
	fs.DurationVar(&f.timeout, "timeout", registry.DefaultTimeout, pre+"give up when the whole transfer is not done within this (0: never)")
	fs.DurationVar(&f.responseTimeout, "response-timeout", registry.DefaultResponseHeaderTimeout, pre+"give up when the registry sends no response headers within this of a request; a request that times out is not retried (0: never)")
}

// options turns the flags and the environment into registry.Options:
// --username with BENCHSEAL_REGISTRY_PASSWORD, else the Docker config
// ($DOCKER_CONFIG/config.json or ~/.docker/config.json, with its
// credential helpers), else anonymous.
func (f *registryFlags) options(io *IO, ref string) (registry.Options, error) {
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"--timeout", f.timeout}, {"--response-timeout", f.responseTimeout}} {
		if t.d < 0 {
			return registry.Options{}, usagef("%s must not be negative, got %s (0 is never)", t.name, t.d)
		}
	}
	opts := registry.Options{PlainHTTP: f.plainHTTP, Timeout: noneIfZero(f.timeout), ResponseHeaderTimeout: noneIfZero(f.responseTimeout)}
	if f.username != "" {
		pw := io.Getenv("BENCHSEAL_REGISTRY_PASSWORD")
		if pw == "" {
			return opts, usagef("--username needs the password in BENCHSEAL_REGISTRY_PASSWORD")
		}
		host := registryHost(ref)
		opts.Credential = auth.StaticCredential(host, auth.Credential{Username: f.username, Password: pw})
		return opts, nil
	}
	cfg := io.Getenv("DOCKER_CONFIG")
	if cfg == "" {
		home := io.Getenv("HOME")
		if home == "" {
			return opts, nil // no Docker config to read: anonymous
		}
		cfg = filepath.Join(home, ".docker")
	}
	store, err := credentials.NewStore(filepath.Join(cfg, "config.json"), credentials.StoreOptions{})
	if err != nil {
		return opts, fmt.Errorf("read Docker config: %w", err)
	}
	opts.Credential = credentials.Credential(store)
	return opts, nil
}

// noneIfZero maps a flag's 0 ("never") to the library's negative.
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// registryHost returns the host[:port] of a reference (the part before the
// first slash).
func registryHost(ref string) string {
	for i := range len(ref) {
		if ref[i] == '/' {
			return ref[:i]
		}
	}
	return ref
}

// registryError maps library errors to exit codes: bad references are
// usage errors, content that fails a check is rejected (exit 3).
func registryError(err error) error {
	switch {
	case errors.Is(err, registry.ErrReference):
		return usageError{err}
	case errors.Is(err, artifact.ErrInvalid):
		return rejected(err)
	}
	return err
}

type pushOptions struct {
	io     *IO
	bundle string
	ref    string
	flags  registryFlags
}

func newPushCmd(io *IO) *cobra.Command {
	o := &pushOptions{io: io}
	cmd := &cobra.Command{
		Use:   "push BUNDLE REF [--plain-http]",
		Short: "Push a bundle and its signatures to an OCI registry",
		Long: `push uploads BUNDLE (a directory or .tar) to REF, host[:port]/repository:tag:
the run manifest's blobs, the run manifest, every signature referrer (subject =
the run manifest), then the tag. On registries without the OCI referrers API
the referrers tag sha256-<hex> is maintained instead. Every blob is digest-checked
while it uploads. Pushing again is idempotent and adds new signatures.
--timeout and --response-timeout, and the retries, are as for pull.

Credentials: --username with the password in BENCHSEAL_REGISTRY_PASSWORD, else
the Docker config ($DOCKER_CONFIG/config.json or ~/.docker/config.json and its
credential helpers), else anonymous.`,
		Example: `  benchseal push run.tar 127.0.0.1:5000/bench/run:v1 --plain-http
  BENCHSEAL_REGISTRY_PASSWORD=... benchseal push run.tar registry.example/bench/run:v1 --username me`,
		Args: exactArgs(2, "a bundle and a registry reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle, o.ref = args[0], args[1]
			return runPush(cmd.Context(), o)
		},
	}
	o.flags.bind(cmd)
	return cmd
}

func runPush(ctx context.Context, o *pushOptions) error {
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	opts, err := o.flags.options(o.io, o.ref)
	if err != nil {
		return err
	}
	res, err := registry.Push(ctx, o.bundle, o.ref, opts)
	if err != nil {
		return registryError(err)
	}
	fmt.Fprintf(o.io.Out, "pushed %s\n  to         %s\n  manifest   %s\n  blobs      %d uploaded, %d already there\n",
		o.bundle, res.Reference, res.ManifestDigest, res.Uploaded, res.Present)
	for _, r := range res.Referrers {
		fmt.Fprintf(o.io.Out, "  referrer   %s\n", r)
	}
	return nil
}
