package merge

import (
	"bufio"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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

// shardRun is one opened shard run.
type shardRun struct {
	dir      string
	rd       *schema.RunDir
	m        *schema.Manifest
	mbytes   []byte
	comparer []byte
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
		return nil, fmt.Errorf("%w: no shard runs given", ErrMerge)
	}
	if err := checkOut(out); err != nil {
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
			return nil, fmt.Errorf("%w: %s is shard %d of %d, but the merge is of %d shards (%s)", ErrMerge, sr.dir, s.Index, s.Count, count, runs[0].dir)
		}
		if prev := byIndex[s.Index]; prev != nil {
			return nil, fmt.Errorf("%w: %s and %s are both shard %d of %d: shards must be disjoint", ErrMerge, prev.dir, sr.dir, s.Index, count)
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
			return nil, fmt.Errorf("%w: %s was started at %s, but %s at %s: shards of one run share one --start-at",
				ErrMerge, sr.dir, startAt(b), first.dir, startAt(a))
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
			return nil, fmt.Errorf("%w: no run given for shard(s) %s of %d: their requests would be missing (merge with --allow-incomplete to write a run marked incomplete that counts them as not sent)", ErrMerge, ints(res.Missing), count)
		}
		for _, i := range res.Incomplete {
			sr := byIndex[i]
			return nil, fmt.Errorf("%w: %s (shard %d of %d) is incomplete: %s (merge with --allow-incomplete to write a run marked incomplete)", ErrMerge, sr.dir, i, count, sr.m.IncompleteReason)
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
	if _, err := schema.CheckRunDirContext(ctx, st.Path(), 20); err != nil {
		return nil, fmt.Errorf("%w: the merged run would not validate: %w", ErrMerge, err)
	}
	if err := st.Publish(true); err != nil {
		return nil, fmt.Errorf("merge into %s: %w", out, err)
	}
	res.Dir, res.Manifest = out, m
	return res, nil
}

// checkOut refuses an output that exists and is not an empty directory,
// and removes what killed merges left beside it.
func checkOut(out string) error {
	if out == "" {
		return fmt.Errorf("%w: no output directory", ErrMerge)
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

// openShard validates a shard run and reads its manifest.
func openShard(ctx context.Context, dir string) (*shardRun, error) {
	if _, err := schema.CheckRunDirContext(ctx, dir, 20); err != nil {
		return nil, fmt.Errorf("%w: shard run %s: %w", ErrMerge, dir, err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: shard run %s: %w", ErrMerge, dir, err)
	}
	m := rd.Manifest()
	if m.Shard == nil {
		return nil, fmt.Errorf("%w: %s is not a shard run (its manifest has no shard; capture shards with --shard I/N)", ErrMerge, dir)
	}
	if m.ServerMetrics != nil {
		return nil, fmt.Errorf("%w: %s holds server metrics scrapes, which merge does not join (capture shards without --server-metrics)", ErrMerge, dir)
	}
	if len(rd.Attachments) > 0 {
		return nil, fmt.Errorf("%w: %s holds attachments, which merge does not join", ErrMerge, dir)
	}
	if rd.Claims() != nil {
		return nil, fmt.Errorf("%w: %s holds claims: claims belong to the merged run (replay --write-claims after merging)", ErrMerge, dir)
	}
	mb, err := os.ReadFile(filepath.Join(dir, schema.ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("%w: shard run %s: %w", ErrMerge, dir, err)
	}
	cmp, err := comparable(m)
	if err != nil {
		return nil, fmt.Errorf("%w: shard run %s: %w", ErrMerge, dir, err)
	}
	return &shardRun{dir: dir, rd: rd, m: m, mbytes: mb, comparer: cmp}, nil
}

// perProcessNotes are the manifest notes each shard writes of itself.
var perProcessNotes = []string{"http", "token_counts", "shard"}

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
	return fmt.Errorf("%w: %s differs from %s in %s: shards must come from one plan, seed and manifest", ErrMerge, b.dir, a.dir, what)
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

// mergedManifest builds the merged run's manifest from the shards'
// (byIndex[i] nil for a missing shard). Member record counts are filled
// by the caller once the records are written.
func mergedManifest(byIndex []*shardRun, res *Result, o Options) (*schema.Manifest, error) {
	var base *shardRun
	var epoch int64
	var finish time.Time
	for _, sr := range byIndex {
		if sr == nil {
			continue
		}
		if base == nil || sr.m.EpochUnixNS < epoch {
			epoch = sr.m.EpochUnixNS
		}
		if base == nil {
			base = sr
		}
		if f, err := time.Parse(time.RFC3339Nano, sr.m.FinishTime); err == nil && f.After(finish) {
			finish = f
		}
	}
	var m schema.Manifest
	if err := json.Unmarshal(mustJSON(base.m), &m); err != nil {
		return nil, fmt.Errorf("merge: copy manifest: %w", err)
	}
	m.RunID = schema.NewRunID()
	m.EpochUnixNS = epoch
	m.StartTime = time.Unix(0, epoch).UTC().Format(time.RFC3339Nano)
	m.FinishTime = finish.UTC().Format(time.RFC3339Nano)
	m.Shard = nil
	m.Incomplete, m.IncompleteReason = false, ""
	if m.ServerState != nil {
		// Warmup durations and prefix-cache resets were measured by each
		// shard on its own clock; the merged run states none of them (the
		// warmup records, and so the cold column, are kept).
		m.ServerState = nil
		if m.Notes == nil {
			m.Notes = map[string]string{}
		}
		m.Notes["server_state"] = "not joined: each shard recorded its own warmup durations and prefix-cache resets on its own clock"
	}
	if len(o.CommandLine) > 0 {
		m.Client.CommandLine = slices.Clone(o.CommandLine)
	}
	sh := &schema.Shards{Count: len(byIndex), Split: schema.ShardSplitV1}
	// The reason stays short for thousands of shards: missing shards as
	// ranges, the first few incomplete shards' reasons (every member
	// keeps its own).
	var reasons []string
	var missing []int
	incomplete := 0
	for i, sr := range byIndex {
		if sr == nil {
			sh.Members = append(sh.Members, schema.ShardMember{Index: i, Missing: true})
			missing = append(missing, i)
			continue
		}
		sum := sha256.Sum256(sr.mbytes)
		mb := schema.ShardMember{
			Index: i, RunID: sr.m.RunID, ManifestSHA256: hex.EncodeToString(sum[:]),
			EpochUnixNS: sr.m.EpochUnixNS, OffsetNS: sr.m.EpochUnixNS - epoch,
			LateNS: sr.m.Shard.LateNS, Clock: sr.m.Shard.Clock, Host: sr.m.Client.Host,
			Incomplete: sr.m.Incomplete, IncompleteReason: sr.m.IncompleteReason,
			Pulled: o.Pulled[i],
		}
		if sr.m.Incomplete {
			if incomplete++; incomplete <= maxReasons {
				reasons = append(reasons, fmt.Sprintf("shard %d of %d is incomplete: %s", i, len(byIndex), sr.m.IncompleteReason))
			}
		}
		if sr.m.Client.TokenCounts == "chunk-count-estimate" {
			m.Client.TokenCounts = sr.m.Client.TokenCounts
		}
		if !sameHost(sr.m.Client.Host, base.m.Client.Host) {
			m.Client.Host = nil
		}
		sh.Members = append(sh.Members, mb)
	}
	if u, ok, why := schema.TimelineUncertainty(sh.Members); ok {
		sh.TimelineUncertaintyNS = &u
	} else {
		sh.UncertaintyReason = why
	}
	m.Shards = sh
	if incomplete > maxReasons {
		reasons = append(reasons, fmt.Sprintf("%d more shards are incomplete (shards.members[].incomplete_reason)", incomplete-maxReasons))
	}
	switch {
	case len(missing) == 1:
		reasons = append([]string{fmt.Sprintf("shard %d of %d was not merged (missing)", missing[0], len(byIndex))}, reasons...)
	case len(missing) > 1:
		reasons = append([]string{fmt.Sprintf("shards %s of %d were not merged (missing)", indexRanges(missing, maxReasons), len(byIndex))}, reasons...)
	}
	if len(reasons) > 0 {
		m.Incomplete = true
		m.IncompleteReason = "merged from shards: " + strings.Join(reasons, "; ")
	}
	if m.Notes == nil {
		m.Notes = map[string]string{}
	}
	delete(m.Notes, "shard")
	delete(m.Notes, "http")
	m.Notes["shards"] = fmt.Sprintf("merged from %d shard runs (split %s): every record keeps its global request number and names its shard; "+
		"each shard's scheduled_ns, sent_ns and end_ns were moved by its offset_ns (its epoch minus the earliest, by the machines' wall clocks), "+
		"so latencies within a request never depend on two clocks, while the order of requests of different shards, the window and what is "+
		"computed over it (throughput, goodput) are uncertain by shards.timeline_uncertainty_ns", len(byIndex), schema.ShardSplitV1)
	m.Unknown = slices.DeleteFunc(m.Unknown, func(u string) bool { return strings.HasPrefix(u, "client.host") })
	m.Unknown = append(m.Unknown, schema.MissingMustState(&m)...)
	slices.Sort(m.Unknown)
	m.Unknown = slices.Compact(m.Unknown)
	return &m, nil
}

func sameHost(a, b *schema.Host) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a decoded manifest always marshals
	}
	return b
}

// head is the next record of one shard's stream with its run-order key.
type head struct {
	rec   *schema.Record
	shard int
	key   [2]int64 // phase in run order, request number
}

type heads []*head

func (h heads) Len() int { return len(h) }
func (h heads) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key[0] < h[j].key[0] || (h[i].key[0] == h[j].key[0] && h[i].key[1] < h[j].key[1])
	}
	return h[i].shard < h[j].shard
}
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)   { *h = append(*h, x.(*head)) }
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// writeRecords writes the shards' records to path in run order (phase by
// phase as capture runs them, request numbers ascending), each moved onto
// the merged timeline by its shard's offset, and returns the count per
// shard.
func writeRecords(ctx context.Context, path string, byIndex []*shardRun, m *schema.Manifest) ([]int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("merge: write records: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	points := map[string]int{}
	for i, p := range m.Load.Points {
		points[p.Name] = i
	}
	order := func(rec *schema.Record) [2]int64 {
		ph := int64(1)
		if rec.Phase == schema.PhaseWarmup {
			ph = 0
		}
		k := int64(0)
		if i := strings.LastIndexByte(rec.ID, '.'); i >= 0 && i+2 <= len(rec.ID) {
			k, _ = strconv.ParseInt(rec.ID[i+2:], 10, 64)
		}
		return [2]int64{(int64(rec.Repeat)*int64(len(m.Load.Points))+int64(points[rec.Point]))*2 + ph, k}
	}
	counts := make([]int64, len(byIndex))
	var readers []*schema.RecordReader
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	h := &heads{}
	next := func(hd *head, rr *schema.RecordReader) error {
		rec, err := rr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: shard run %s: %w", ErrMerge, byIndex[hd.shard].dir, err)
		}
		hd.rec, hd.key = rec, order(rec)
		heap.Push(h, hd)
		return nil
	}
	rrs := make([]*schema.RecordReader, len(byIndex))
	for i, sr := range byIndex {
		if sr == nil {
			continue
		}
		rr, err := sr.rd.OpenRecordReader()
		if err != nil {
			return nil, fmt.Errorf("%w: shard run %s: %w", ErrMerge, sr.dir, err)
		}
		readers = append(readers, rr)
		rrs[i] = rr
		if err := next(&head{shard: i}, rr); err != nil {
			return nil, err
		}
	}
	var buf []byte
	for h.Len() > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		hd := heap.Pop(h).(*head)
		rec, i := hd.rec, hd.shard
		off := m.Shards.Members[i].OffsetNS
		if rec.ScheduledNS != nil {
			v := *rec.ScheduledNS + off
			rec.ScheduledNS = &v
		}
		rec.SentNS += off
		rec.EndNS += off
		s := int64(i)
		rec.Shard = &s
		buf, err = schema.AppendRecord(buf[:0], rec)
		if err != nil {
			return nil, fmt.Errorf("merge: write records: %w", err)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return nil, fmt.Errorf("merge: write records: %w", err)
		}
		counts[i]++
		if err := next(&head{shard: i}, rrs[i]); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("merge: write records: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("merge: write records: %w", err)
	}
	return counts, nil
}

// maxReasons bounds the clauses of a merged run's incomplete_reason.
const maxReasons = 8

// indexRanges writes ascending indices as ranges ("0-2, 4, 6-4095"), the
// first max of them, then how many more ranges there are.
func indexRanges(idx []int, max int) string {
	var parts []string
	more := 0
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		switch {
		case len(parts) == max:
			more++
		case i == j:
			parts = append(parts, strconv.Itoa(idx[i]))
		default:
			parts = append(parts, strconv.Itoa(idx[i])+"-"+strconv.Itoa(idx[j]))
		}
		i = j + 1
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more ranges", more))
	}
	return strings.Join(parts, ", ")
}
