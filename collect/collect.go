package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"oras.land/oras-go/v2/errdef"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/registry"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/k8s"
	"github.com/benchseal/benchseal/verify"
)

// ErrRejected is the root of the errors for a shard bundle that failed
// verification (it also wraps verify.ErrRejected or artifact.ErrInvalid).
var ErrRejected = errors.New("shard bundle rejected")

// ErrMissing is returned for a shard the registry does not have, unless
// Options.AllowMissing.
var ErrMissing = errors.New("shard missing from the registry")

// Options configure Shards.
type Options struct {
	// Registry are the connection settings of every pull.
	Registry registry.Options
	// Verifier checks each shard bundle with Policy; required.
	Verifier *verify.Verifier
	Policy   verify.Policy
	// AllowMissing lists a shard whose reference the registry does not
	// know in Result.Missing instead of failing.
	AllowMissing bool
}

// Shard is one collected shard.
type Shard struct {
	Index int
	// Ref is the reference it was pulled from.
	Ref string
	// RunDir is the run unpacked from the verified bundle, inside the
	// directory given to Shards (the pulled bundle is removed).
	RunDir string
	// Result is its verification result (Verified).
	Result *verify.Result
}

// Result lists the collected shards in index order and the missing ones.
type Result struct {
	Shards  []Shard
	Missing []int
}

// RunDirs returns the run directories of the collected shards.
func (r *Result) RunDirs() []string {
	dirs := make([]string, len(r.Shards))
	for i, s := range r.Shards {
		dirs[i] = s.RunDir
	}
	return dirs
}

// Shards pulls REF-shard-0 … REF-shard-(n-1) into dir (an existing, empty
// working directory the caller removes), verifies each bundle and unpacks
// it. The first shard that cannot be pulled or fails verification ends
// the collection with an error naming it.
func Shards(ctx context.Context, ref string, n int, dir string, o Options) (*Result, error) {
	if o.Verifier == nil {
		return nil, errors.New("collect shards: no verifier")
	}
	if n < 1 {
		return nil, fmt.Errorf("collect shards: %d shards", n)
	}
	if _, err := k8s.ShardRef(ref, n-1); err != nil {
		return nil, errcond.Errorf(registry.ErrReference, "invalid registry reference: %w", err)
	}
	res := &Result{}
	for i := range n {
		s, err := one(ctx, ref, i, dir, o)
		if errors.Is(err, ErrMissing) && o.AllowMissing {
			res.Missing = append(res.Missing, i)
			continue
		}
		if err != nil {
			return nil, err
		}
		res.Shards = append(res.Shards, *s)
	}
	return res, nil
}

func one(ctx context.Context, ref string, i int, dir string, o Options) (*Shard, error) {
	sref, err := k8s.ShardRef(ref, i)
	if err != nil {
		return nil, errcond.Errorf(registry.ErrReference, "invalid registry reference: %w", err)
	}
	s := &Shard{Index: i, Ref: sref, RunDir: filepath.Join(dir, "shard-"+strconv.Itoa(i))}
	tarPath := s.RunDir + ".tar"
	if _, err := registry.Pull(ctx, sref, tarPath, o.Registry); err != nil {
		if errors.Is(err, errdef.ErrNotFound) {
			return nil, errcond.Errorf(ErrMissing, "shard %d: shard missing from the registry: %s", i, sref)
		}
		if errors.Is(err, artifact.ErrInvalid) {
			return nil, errcond.Errorf(ErrRejected, "shard %d (%s): shard bundle rejected: %w", i, sref, err)
		}
		return nil, fmt.Errorf("shard %d: %w", i, err)
	}
	b, err := artifact.Open(tarPath)
	if err != nil {
		return nil, errcond.Errorf(ErrRejected, "shard %d (%s): shard bundle rejected: %w", i, sref, err)
	}
	defer b.Close()
	s.Result, err = o.Verifier.VerifyBundle(ctx, b, o.Policy)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || !s.Result.Verified {
		return nil, errcond.Errorf(ErrRejected, "shard %d (%s): shard bundle rejected: %w", i, sref, failed(s.Result, err))
	}
	// The same opened bundle: what is unpacked is checked against the run
	// manifest that was just verified.
	if err := b.Unpack(ctx, s.RunDir); err != nil {
		return nil, fmt.Errorf("shard %d (%s): %w", i, sref, err)
	}
	return s, os.Remove(tarPath)
}

// failed returns why res did not verify: err (the failed checks, each a
// *verify.CheckError wrapping verify.ErrRejected), or, should a result be
// unverified without one, its failed checks.
func failed(res *verify.Result, err error) error {
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range res.Checks {
		if c.Status == verify.StatusFailed {
			errs = append(errs, &verify.CheckError{Check: c.Name, Blob: c.Blob, Err: errors.New(c.Reason)})
		}
	}
	if len(errs) == 0 {
		return errcond.Errorf(verify.ErrRejected, "bundle rejected: not verified")
	}
	return errors.Join(errs...)
}
