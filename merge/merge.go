package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ErrMerge is the root of the errors of a refused merge.
var ErrMerge = errors.New("merge refused")

// Options configure a merge.
type Options struct {
	// AllowIncomplete writes a run marked incomplete when a shard is
	// missing or its own run is incomplete, its unsent requests counted
	// as missing (replay: not sent), instead of refusing.
	AllowIncomplete bool
	// Shards is the shard count expected (0: the count the shards state).
	// Set it when a shard may be absent from the arguments altogether.
	Shards int
	// CommandLine, when set, becomes the merged run's client.command_line.
	CommandLine []string
	// Pulled maps a shard index to the bundle merge --pull took it from
	// (recorded as shards.members[].pulled).
	Pulled map[int]*schema.ShardPull
}

// Result describes a merged run.
type Result struct {
	Dir      string
	Manifest *schema.Manifest
	Records  int64
	// Missing lists the shards no run was given for; Incomplete those
	// whose own run was incomplete.
	Missing, Incomplete []int
}

// Merge joins the shard run directories dirs into a new run directory
// out, which must not exist or be empty. Every shard run must validate on
// its own; they must share one shard count and the same manifest apart
// from what differs per process (run id, times, epoch, shard, host,
// command line), hold distinct shard indices, and — unless
// o.AllowIncomplete — be complete and all present. Errors name the shard
// directory at fault.
func Merge(ctx context.Context, dirs []string, out string, o Options) (*Result, error) {
	if len(dirs) == 0 {
		return nil, errcond.Errorf(ErrMerge, "merge refused: no shard runs given")
	}
	if err := CheckOut(out); err != nil {
		return nil, err
	}
	runs := make([]*shardRun, 0, len(dirs))
	for _, d := range dirs {
		sr, err := openShard(ctx, d)
		if err != nil {
			return nil, err
		}
		runs = append(runs, sr)
	}
	count := o.Shards
	if count == 0 {
		count = runs[0].m.Shard.Count
	}
	byIndex := make([]*shardRun, count)
	for _, sr := range runs {
		s := sr.m.Shard
		if s.Count != count {
			return nil, errcond.Errorf(ErrMerge, "merge refused: %s is shard %d of %d, but the merge is of %d shards (%s)", sr.dir, s.Index, s.Count, count, runs[0].dir)
		}
		if prev := byIndex[s.Index]; prev != nil {
			return nil, errcond.Errorf(ErrMerge, "merge refused: %s and %s are both shard %d of %d: shards must be disjoint", prev.dir, sr.dir, s.Index, count)
		}
		byIndex[s.Index] = sr
	}
	first := runs[0]
	for _, sr := range runs[1:] {
		if err := sameRun(first, sr); err != nil {
			return nil, err
		}
		// Shards of one run start together: a different (or no) common
		// start is another run, or shards whose phases would overlap.
		if a, b := first.m.Shard.StartAt, sr.m.Shard.StartAt; a != b {
			return nil, errcond.Errorf(ErrMerge, "merge refused: %s was started at %s, but %s at %s: shards of one run share one --start-at",
				sr.dir, startAt(b), first.dir, startAt(a))
		}
	}
	res := &Result{}
	for i, sr := range byIndex {
		switch {
		case sr == nil:
			res.Missing = append(res.Missing, i)
		case sr.m.Incomplete:
			res.Incomplete = append(res.Incomplete, i)
		}
	}
	if !o.AllowIncomplete {
		if len(res.Missing) > 0 {
			return nil, errcond.Errorf(ErrMerge, "merge refused: no run given for shard(s) %s of %d: their requests would be missing (merge with --allow-incomplete to write a run marked incomplete that counts them as not sent)", ints(res.Missing), count)
		}
		for _, i := range res.Incomplete {
			sr := byIndex[i]
			return nil, errcond.Errorf(ErrMerge, "merge refused: %s (shard %d of %d) is incomplete: %s (merge with --allow-incomplete to write a run marked incomplete)", sr.dir, i, count, sr.m.IncompleteReason)
		}
	}
	m, err := mergedManifest(byIndex, res, o)
	if err != nil {
		return nil, err
	}
	st, err := schema.NewStagedDir(out)
	if err != nil {
		return nil, fmt.Errorf("merge into %s: %w", out, err)
	}
	defer st.Discard()
	counts, err := writeRecords(ctx, st.Join(schema.RecordsFile), byIndex, m)
	if err != nil {
		return nil, err
	}
	for i, n := range counts {
		m.Shards.Members[i].Records = n
		res.Records += n
	}
	if first.rd.WorkloadPath != "" {
		if err := copyFile(first.rd.WorkloadPath, st.Join(schema.WorkloadFile)); err != nil {
			return nil, err
		}
	}
	b, err := schema.MarshalDocument(m)
	if err != nil {
		return nil, fmt.Errorf("merge: write manifest: %w", err)
	}
	if err := st.WriteFile(schema.ManifestFile, b); err != nil {
		return nil, fmt.Errorf("merge: write manifest: %w", err)
	}
	// The merged run must validate before it takes the output's place.
	if _, err := schema.CheckRunDir(ctx, st.Path(), 20, nil); err != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: the merged run would not validate: %w", err)
	}
	if err := st.Publish(true); err != nil {
		return nil, fmt.Errorf("merge into %s: %w", out, err)
	}
	res.Dir, res.Manifest = out, m
	return res, nil
}

// CheckOut refuses an output that exists and is not an empty directory,
// and removes what killed merges left beside it. Merge calls it first; a
// caller with slow work to do before Merge (pulling the shards from a
// registry) calls it before that work, so a refused output costs nothing.
func CheckOut(out string) error {
	if out == "" {
		return errcond.Errorf(ErrMerge, "merge refused: no output directory")
	}
	ents, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("merge into %s: %w", out, err)
	case len(ents) > 0:
		// Not ErrMerge: no shard was refused; the output cannot be written.
		return fmt.Errorf("merge into %s: it exists and is not empty (refusing to overwrite)", out)
	}
	if _, err := schema.ReclaimStale(out); err != nil {
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	defer in.Close()
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	if _, err := io.Copy(f, in); err != nil {
		f.Close()
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("merge: copy %s: %w", src, err)
	}
	return nil
}
