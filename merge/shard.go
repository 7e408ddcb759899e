package merge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// shardRun is one opened shard run.
type shardRun struct {
	dir      string
	rd       *schema.RunDir
	m        *schema.Manifest
	mbytes   []byte
	comparer []byte
}

// openShard validates a shard run and reads its manifest.
func openShard(ctx context.Context, dir string) (*shardRun, error) {
	if _, err := schema.CheckRunDir(ctx, dir, 20, nil); err != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: shard run %s: %w", dir, err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: shard run %s: %w", dir, err)
	}
	m := rd.Manifest()
	if m.Shard == nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: %s is not a shard run (its manifest has no shard; capture shards with --shard I/N)", dir)
	}
	if m.ServerMetrics != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: %s holds server metrics scrapes, which merge does not join (capture shards without --server-metrics)", dir)
	}
	if len(rd.Attachments) > 0 {
		return nil, errcond.Errorf(ErrMerge, "merge refused: %s holds attachments, which merge does not join", dir)
	}
	if rd.Claims() != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: %s holds claims: claims belong to the merged run (replay --write-claims after merging)", dir)
	}
	mb, err := os.ReadFile(filepath.Join(dir, schema.ManifestFile))
	if err != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: shard run %s: %w", dir, err)
	}
	cmp, err := comparable(m)
	if err != nil {
		return nil, errcond.Errorf(ErrMerge, "merge refused: shard run %s: %w", dir, err)
	}
	return &shardRun{dir: dir, rd: rd, m: m, mbytes: mb, comparer: cmp}, nil
}

// perProcessNotes are the manifest notes each shard writes of itself.
var perProcessNotes = []string{"http", "token_counts", "shard", schema.NoteUncountedInput}

// comparable returns m's JSON without what legitimately differs between
// the shards of one capture.
func comparable(m *schema.Manifest) ([]byte, error) {
	c := *m
	c.RunID, c.StartTime, c.FinishTime, c.EpochUnixNS = "", "", "", 0
	c.Incomplete, c.IncompleteReason = false, ""
	c.Shard = nil
	// Each shard measured its own warmup durations and reset calls: the
	// server state is per process and not joined (mergedManifest).
	c.ServerState = nil
	c.Client.CommandLine, c.Client.Host, c.Client.TokenCounts = nil, nil, ""
	c.Unknown = slices.DeleteFunc(slices.Clone(c.Unknown), func(u string) bool {
		return u == "client.token_counts" || strings.HasPrefix(u, "client.host")
	})
	if c.Notes != nil {
		n := map[string]string{}
		for k, v := range c.Notes {
			if !slices.Contains(perProcessNotes, k) {
				n[k] = v
			}
		}
		c.Notes = n
	}
	return json.Marshal(c)
}

// sameRun reports how b's manifest differs from a's beyond what differs
// per process, naming the top-level fields.
func sameRun(a, b *shardRun) error {
	if string(a.comparer) == string(b.comparer) {
		return nil
	}
	var ma, mb map[string]json.RawMessage
	json.Unmarshal(a.comparer, &ma)
	json.Unmarshal(b.comparer, &mb)
	var diff []string
	for k, v := range ma {
		if string(mb[k]) != string(v) {
			diff = append(diff, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			diff = append(diff, k)
		}
	}
	slices.Sort(diff)
	what := strings.Join(diff, ", ")
	if sa, sb := a.m.Client.Seed, b.m.Client.Seed; sa != nil && sb != nil && *sa != *sb {
		what = fmt.Sprintf("client.seed (%d, not %d), and so %s", *sb, *sa, what)
	}
	return errcond.Errorf(ErrMerge, "merge refused: %s differs from %s in %s: shards must come from one plan, seed and manifest", b.dir, a.dir, what)
}

func startAt(s string) string {
	if s == "" {
		return "no common start (no --start-at)"
	}
	return s
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
