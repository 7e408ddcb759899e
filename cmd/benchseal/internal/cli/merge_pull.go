package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/benchseal/benchseal/artifact/registry"
	"github.com/benchseal/benchseal/collect"
	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// mergePullFlags are merge's flags for collecting the shards from a
// registry: the reference, whom to trust and how to connect.
type mergePullFlags struct {
	deps          *Deps
	ref           string
	trust         trustFlags
	allowUnsigned bool
	registry      registryFlags
}

func (p *mergePullFlags) bind(f *pflag.FlagSet) {
	f.StringVar(&p.ref, "pull", "", "REF host[:port]/repository:tag: pull, verify and merge REF-shard-0 … REF-shard-(N-1) (with --shards N)")
	p.trust.bind(f, "key", "with --pull: pinned public key every shard bundle must be signed by (repeatable)")
	f.BoolVar(&p.allowUnsigned, "allow-unsigned", false, "with --pull, UNSAFE: check the shard bundles' integrity only; nothing is authenticated")
	f.BoolVar(&p.registry.plainHTTP, "plain-http", false, "with --pull: use HTTP instead of HTTPS (loopback test registries)")
	f.StringVar(&p.registry.username, "username", "", "with --pull: registry user name; the password comes from BENCHSEAL_REGISTRY_PASSWORD (default: credentials from the Docker config)")
	p.registry.bindTimeouts(f, "with --pull, per shard: ")
}

// strayFlag names a --pull-only flag that is set, or returns "".
func (p *mergePullFlags) strayFlag(f *pflag.FlagSet) string {
	for _, name := range []string{"key", "certificate-identity", "certificate-identity-regexp", "certificate-oidc-issuer",
		"certificate-oidc-issuer-regexp", "trusted-root", "insecure-ignore-sct", "allow-unsigned", "plain-http", "username", "timeout", "response-timeout"} {
		if f.Changed(name) {
			return name
		}
	}
	return ""
}

// runMergePull pulls and verifies the shards, then merges them as
// runMerge does.
func runMergePull(ctx context.Context, o *mergeOptions) error {
	p := &o.pull
	if len(o.shardDirs) > 0 {
		return usagef("--pull collects the shards itself: give no shard directories (%s)", o.shardDirs[0])
	}
	if o.shards < 1 {
		return usagef("--pull needs --shards N: the number of shards the Job ran")
	}
	if o.shards > schema.MaxShards {
		return usagef("--shards %d: want 1..%d", o.shards, schema.MaxShards)
	}
	trusted := len(p.trust.keys) > 0 || p.trust.identityGiven()
	if !trusted && !p.allowUnsigned {
		return usagef("--pull needs at least one --key or a --certificate-identity to verify the shards with (or --allow-unsigned to check integrity only)")
	}
	if trusted && p.allowUnsigned {
		return usagef("--key and --allow-unsigned cannot be used together")
	}
	keys, vopts, err := p.trust.build()
	if err != nil {
		return err
	}
	v, err := verify.NewVerifier(keys, append(vopts, p.deps.verifyOptions()...)...)
	if err != nil {
		return err
	}
	ropts, err := p.registry.options(o.io, p.ref)
	if err != nil {
		return err
	}
	// Refuse an --out merge would refuse, before pulling anything.
	if err := merge.CheckOut(o.out); err != nil {
		return mergeError(err)
	}
	if p.allowUnsigned {
		fmt.Fprintln(o.io.ErrOut, "benchseal: WARNING: --allow-unsigned: the shards' signatures are NOT checked; NOTHING IS AUTHENTICATED")
	}
	// The shards are staged beside --out, in a locked entry that the next
	// run reclaims when this one is killed (never in $TMPDIR, often RAM).
	if _, err := schema.ReclaimStale(o.out); err != nil {
		return err
	}
	st, err := schema.NewStagingDir(o.out)
	if err != nil {
		return err
	}
	defer func() {
		os.RemoveAll(st.Path)
		st.Release()
	}()
	dir := st.Path
	res, err := collect.Shards(ctx, p.ref, o.shards, dir, collect.Options{
		Registry:     ropts,
		Verifier:     v,
		Policy:       verify.Policy{AllowUnsignedUnsafe: p.allowUnsigned},
		AllowMissing: o.allowIncomplete,
	})
	if err != nil {
		switch {
		case errors.Is(err, registry.ErrReference):
			return usageError{err}
		case errors.Is(err, collect.ErrRejected), errors.Is(err, collect.ErrMissing):
			return rejected(err)
		}
		return err
	}
	o.pulled = map[int]*schema.ShardPull{}
	for _, s := range res.Shards {
		how := "verified, NOT authenticated (--allow-unsigned)"
		pull := &schema.ShardPull{Ref: s.Ref, BundleDigest: s.Result.ManifestDigest, By: schema.ShardPullUnsigned}
		if s.Result.Authenticated {
			pull.Authenticated, pull.By = true, signedBy(s.Result)
			how = "verified, signed by " + pull.By
		}
		o.pulled[s.Index] = pull
		fmt.Fprintf(o.io.Out, "pulled shard %d: %s (manifest %s) %s\n", s.Index, s.Ref, s.Result.ManifestDigest, how)
	}
	for _, i := range res.Missing {
		fmt.Fprintf(o.io.Out, "pulled shard %d: MISSING from the registry\n", i)
	}
	if len(res.Shards) == 0 {
		return rejected(fmt.Errorf("no shard of %s is in the registry", p.ref))
	}
	o.shardDirs = res.RunDirs()
	return runMerge(ctx, o)
}

// signedBy names what authenticated a verified bundle: the fingerprints of
// the pinned keys, or the identities and issuers of keyless signatures,
// that verified it.
func signedBy(r *verify.Result) string {
	var by []string
	for _, sig := range r.Signatures {
		switch {
		case !sig.Verified:
		case sig.Key != "":
			by = append(by, "key "+sig.Key)
		case sig.Identity != "":
			by = append(by, "identity "+sig.Identity+" issuer "+sig.Issuer)
		}
	}
	if len(by) == 0 {
		return "a verified signature" // Authenticated, but the result names no signer
	}
	return strings.Join(slices.Compact(by), ", ")
}
