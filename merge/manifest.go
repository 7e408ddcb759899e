package merge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// mergedManifest builds the merged run's manifest from the shards'
// (byIndex[i] nil for a missing shard). Member record counts are filled
// by the caller once the records are written.
func mergedManifest(byIndex []*shardRun, res *Result, o Options) (*schema.Manifest, error) {
	base, epoch, finish := shardSpan(byIndex)
	var m schema.Manifest
	if err := json.Unmarshal(mustJSON(base.m), &m); err != nil {
		return nil, fmt.Errorf("merge: copy manifest: %w", err)
	}
	resetForMerge(&m, epoch, finish, o)
	sh, reasons := shardMembers(&m, byIndex, base, epoch, o)
	m.Shards = sh
	if len(reasons) > 0 {
		m.Incomplete = true
		m.IncompleteReason = "merged from shards: " + strings.Join(reasons, "; ")
	}
	mergeNotes(&m, byIndex)
	m.Unknown = slices.DeleteFunc(m.Unknown, func(u string) bool { return strings.HasPrefix(u, "client.host") })
	m.Unknown = append(m.Unknown, schema.MissingMustState(&m)...)
	slices.Sort(m.Unknown)
	m.Unknown = slices.Compact(m.Unknown)
	return &m, nil
}

// shardSpan is mergedManifest's first phase: the first present shard (the
// manifest the merged one is copied from), the earliest epoch and the
// latest finish time of the present shards.
func shardSpan(byIndex []*shardRun) (base *shardRun, epoch int64, finish time.Time) {
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
	return base, epoch, finish
}

// resetForMerge is mergedManifest's second phase: the copied manifest gets
// a new run ID, the merged run's span, no shard of its own and no
// incompleteness yet, and drops what only one shard's clock measured.
func resetForMerge(m *schema.Manifest, epoch int64, finish time.Time, o Options) {
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
}

// shardMembers is mergedManifest's third phase: one shards.members entry
// per shard, the timeline uncertainty over them, the client facts that
// hold only if every shard agrees, and the reasons the merged run is
// incomplete (missing shards first, as ranges).
func shardMembers(m *schema.Manifest, byIndex []*shardRun, base *shardRun, epoch int64, o Options) (*schema.Shards, []string) {
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
	if incomplete > maxReasons {
		reasons = append(reasons, fmt.Sprintf("%d more shards are incomplete (shards.members[].incomplete_reason)", incomplete-maxReasons))
	}
	switch {
	case len(missing) == 1:
		reasons = append([]string{fmt.Sprintf("shard %d of %d was not merged (missing)", missing[0], len(byIndex))}, reasons...)
	case len(missing) > 1:
		reasons = append([]string{fmt.Sprintf("shards %s of %d were not merged (missing)", indexRanges(missing, maxReasons), len(byIndex))}, reasons...)
	}
	return sh, reasons
}

// mergeNotes is mergedManifest's last phase on the notes: a shard's own
// notes give way to the merged run's, the shards' uncounted-input notes
// are joined, and the "shards" note says how the timelines were joined.
func mergeNotes(m *schema.Manifest, byIndex []*shardRun) {
	if m.Notes == nil {
		m.Notes = map[string]string{}
	}
	delete(m.Notes, "shard")
	delete(m.Notes, "http")
	delete(m.Notes, schema.NoteUncountedInput)
	var uncounted []string
	for i, sr := range byIndex {
		if sr != nil && sr.m.Notes[schema.NoteUncountedInput] != "" {
			uncounted = append(uncounted, fmt.Sprintf("shard %d: %s", i, sr.m.Notes[schema.NoteUncountedInput]))
		}
	}
	if len(uncounted) > 0 {
		m.Notes[schema.NoteUncountedInput] = strings.Join(uncounted, "; ")
	}
	m.Notes["shards"] = fmt.Sprintf("merged from %d shard runs (split %s): every record keeps its global request number and names its shard; "+
		"each shard's scheduled_ns, sent_ns and end_ns were moved by its offset_ns (its epoch minus the earliest, by the machines' wall clocks), "+
		"so latencies within a request never depend on two clocks, while the order of requests of different shards, the window and what is "+
		"computed over it (throughput, goodput) are uncertain by shards.timeline_uncertainty_ns", len(byIndex), schema.ShardSplitV1)
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
