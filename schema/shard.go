// Sharded runs: one seeded plan captured by several client processes (a
// shard each) and merged into one run.

package schema

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"
)

// Shard marks a run as one shard of a sharded capture
// (manifest.shard): it holds only the requests the split rule
// (ShardOf) gives to shard Index of Count, under their global request
// numbers, and merge (not replay) is what makes a run of it.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// StartAt is the common start requested of all shards (RFC 3339),
	// empty when none was.
	StartAt string `json:"start_at,omitempty"`
	// LateNS is epoch_unix_ns minus StartAt: how late this shard began
	// (negative: early, as its own wall clock read it).
	LateNS int64 `json:"late_ns,omitempty"`
	// Clock is what the shard's kernel said of its wall clock when the
	// run's epoch was taken.
	Clock *Clock `json:"clock,omitempty"`
}

// Clock is a machine's own statement of its wall clock's error when a
// run's epoch (the wall-clock anchor of its monotonic timeline) was read:
// the kernel's bounds (adjtimex on Linux) and the time daemon's status
// when one answered. It is never an offset guessed by benchseal.
type Clock struct {
	// Source is "adjtimex" when the kernel was asked, "none" otherwise
	// (Unknown then says why).
	Source string `json:"source"`
	// Synced is the kernel's view: false when it flags the clock
	// unsynchronised (STA_UNSYNC) or its state is TIME_ERROR.
	Synced bool `json:"synced"`
	// MaxErrorNS and EstErrorNS are the kernel's maximum and estimated
	// error of the wall clock, in ns.
	MaxErrorNS int64 `json:"max_error_ns,omitempty"`
	EstErrorNS int64 `json:"est_error_ns,omitempty"`
	// Status is the kernel's clock state and status bits, as text.
	Status string `json:"status,omitempty"`
	// Daemon is what chrony or systemd-timesyncd reported, when present.
	Daemon string `json:"daemon,omitempty"`
	// Unknown says why no bound is known.
	Unknown string `json:"unknown,omitempty"`
}

// Bound returns the clock's error bound in ns, or false when the clock
// gives none (not asked, or not synchronised).
func (c *Clock) Bound() (int64, bool) {
	if c == nil || c.Source != "adjtimex" || !c.Synced || c.MaxErrorNS <= 0 {
		return 0, false
	}
	return c.MaxErrorNS, true
}

// Shards is the shard bookkeeping of a run merged from shards
// (manifest.shards): which shard sent what, and how the shards' own
// timelines were placed on the run's.
type Shards struct {
	Count int `json:"count"`
	// Split names the rule assigning request numbers to shards
	// (ShardSplitV1).
	Split string `json:"split"`
	// Members has one entry per shard index 0..Count-1, in order.
	Members []ShardMember `json:"members"`
	// TimelineUncertaintyNS bounds how far records of two different
	// shards may be misplaced relative to each other on the merged
	// timeline: the sum of the two largest kernel error bounds of the
	// members. Null when some member's clock gave no bound
	// (UncertaintyReason says which).
	TimelineUncertaintyNS *int64 `json:"timeline_uncertainty_ns"`
	UncertaintyReason     string `json:"uncertainty_reason,omitempty"`
}

// ShardMember is one shard of a merged run.
type ShardMember struct {
	Index int `json:"index"`
	// Missing is set when no run of this shard was merged: its requests
	// have no record (the run is then incomplete).
	Missing bool `json:"missing,omitempty"`
	// RunID and ManifestSHA256 name the shard run merged (sha256 of its
	// manifest.json bytes).
	RunID          string `json:"run_id,omitempty"`
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	// Records is how many records the shard contributed.
	Records int64 `json:"records"`
	// EpochUnixNS is the shard's own epoch; OffsetNS (its epoch minus the
	// run's, by the wall clocks) was added to its scheduled_ns, sent_ns
	// and end_ns. chunks_ns, relative to sent_ns, are untouched, so no
	// per-request latency depends on two machines' clocks.
	EpochUnixNS int64 `json:"epoch_unix_ns,omitempty"`
	OffsetNS    int64 `json:"offset_ns"`
	// LateNS, Clock and Host are the shard's own (see Shard).
	LateNS int64  `json:"late_ns,omitempty"`
	Clock  *Clock `json:"clock,omitempty"`
	Host   *Host  `json:"host,omitempty"`
	// Incomplete is set when the shard's own run was incomplete.
	Incomplete       bool   `json:"incomplete,omitempty"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// Pulled, set by merge --pull, names the signed bundle the shard run
	// was unpacked from and how it was authenticated (nil: merged from a
	// directory given on the command line).
	Pulled *ShardPull `json:"pulled,omitempty"`
}

// ShardPull is how merge --pull obtained one shard: the reference and
// the digest of the OCI bundle it pulled and verified, and who signed it.
type ShardPull struct {
	Ref          string `json:"ref"`
	BundleDigest string `json:"bundle_digest"`
	// Authenticated is true when a signature by a trusted key or keyless
	// identity was verified; By then names it ("key sha256:…",
	// "identity ID issuer ISSUER"), else it is ShardPullUnsigned.
	Authenticated bool   `json:"authenticated"`
	By            string `json:"by"`
}

// ShardPullUnsigned is ShardPull.By of a shard merged with
// --allow-unsigned: its integrity was checked, its origin was not.
const ShardPullUnsigned = "unsigned: --allow-unsigned (integrity checked, nothing authenticated)"

// validateShardPull checks a member's pull record: a reference, a
// sha256 bundle digest, and By naming the signer exactly when the shard
// was authenticated.
func validateShardPull(ps *problems, f string, p *ShardPull) {
	switch {
	case p == nil:
		return
	case p.Ref == "":
		ps.add(f+".ref", "must name the reference pulled")
	case !strings.HasPrefix(p.BundleDigest, "sha256:") || !sha256RE.MatchString(strings.TrimPrefix(p.BundleDigest, "sha256:")):
		ps.add(f+".bundle_digest", "is %q, want sha256: and 64 lowercase hex digits", p.BundleDigest)
	case !p.Authenticated && p.By != ShardPullUnsigned:
		ps.add(f+".by", "is %q, but an unauthenticated shard is %q", p.By, ShardPullUnsigned)
	case p.Authenticated && (p.By == "" || p.By == ShardPullUnsigned):
		ps.add(f+".by", "must name the key or identity that authenticated the shard")
	}
}

// ShardOrigins sorts the members of a merged run (missing ones left out)
// by how they were obtained: unsigned, pulled by merge --pull
// --allow-unsigned; local, merged from directories given on the command
// line; signed, pulled and, by the merger's word (pulled.authenticated and
// by), signature-checked. None of them is checkable from the merged bundle:
// it carries neither the shard bundles nor their signatures, so even a
// signed member's origin is what the merger wrote, and the signature of the
// merged bundle covers only the merge.
func (s *Shards) ShardOrigins() (unsigned, local, signed []int) {
	if s == nil {
		return nil, nil, nil
	}
	for _, mb := range s.Members {
		switch {
		case mb.Missing:
		case mb.Pulled == nil:
			local = append(local, mb.Index)
		case !mb.Pulled.Authenticated:
			unsigned = append(unsigned, mb.Index)
		default:
			signed = append(signed, mb.Index)
		}
	}
	return unsigned, local, signed
}

// ShardSplitV1 is the split rule of benchseal's sharded capture. Every
// shard generates the whole seeded plan and sends only its share: in rate
// mode request k of a phase goes to shard k mod count (so the union of
// the shards' arrivals is the planned arrival process); in concurrency
// mode the point's workers w = 0..concurrency−1 go to shard w mod count
// (concurrency split as evenly as possible) and request k to the shard of
// worker k mod concurrency. Workload items follow the request: item of
// request k as in a single process.
const ShardSplitV1 = "benchseal/shard-v1"

// ShardOf returns the shard of request k of a phase under ShardSplitV1.
// concurrency is the point's (ignored in rate mode).
func ShardOf(mode string, concurrency, count int, k int64) int {
	if count <= 1 {
		return 0
	}
	if mode == ModeRate || concurrency <= 0 {
		return int(k % int64(count))
	}
	return int((k % int64(concurrency)) % int64(count))
}

// ShardWorkers returns the share of n (workers, or an outstanding cap)
// that shard index of count gets: n/count, one more for the first
// n mod count shards.
func ShardWorkers(n, count, index int) int {
	if count <= 1 {
		return n
	}
	w := n / count
	if index < n%count {
		w++
	}
	return w
}

// ShardRequests returns how many of request numbers 0..n−1 of a phase
// ShardOf gives to shard index.
func ShardRequests(mode string, concurrency, count, index int, n int64) int64 {
	if count <= 1 {
		return n
	}
	if n <= 0 {
		return 0
	}
	per := func(period, idx int64, n int64) int64 {
		// numbers j in 0..n−1 with j mod period == idx
		if idx >= n {
			return 0
		}
		return (n-idx-1)/period + 1
	}
	if mode == ModeRate || concurrency <= 0 {
		return per(int64(count), int64(index), n)
	}
	c := int64(concurrency)
	full, rest := n/c, n%c
	w := int64(ShardWorkers(concurrency, count, index))
	return full*w + per(int64(count), int64(index), rest)
}

// ShardRateShare returns the share of an open-loop point's arrivals that
// shard index of count sends, as the fraction k/of: its ShardRequests of
// the point's n requests, or 1/count for a point bounded by a duration
// (n = 0). A shard's offered rate is the point's rate times it (capture's
// summary and replay's overload test of a shard run).
func ShardRateShare(count, index int, n int64) (k, of int64) {
	switch {
	case count <= 1:
		return 1, 1
	case n <= 0:
		return 1, int64(count)
	}
	return ShardRequests(ModeRate, 0, count, index, n), n
}

// shardDesc names a shard for messages.
func shardDesc(s, count int) string { return fmt.Sprintf("shard %d of %d", s, count) }

// ShardCount returns the shard count of the run m describes (1 for a run
// that is not sharded).
func (m *Manifest) ShardCount() int {
	switch {
	case m.Shard != nil:
		return max(m.Shard.Count, 1)
	case m.Shards != nil:
		return max(m.Shards.Count, 1)
	}
	return 1
}

// TimelineUncertainty returns the bound that placing these members on one
// timeline carries: the sum of the two largest kernel error bounds (any
// two members' anchors may err in opposite directions). It returns false
// and the reason when a member that was merged gave no bound.
func TimelineUncertainty(members []ShardMember) (int64, bool, string) {
	var a, b int64 // the two largest bounds
	n := 0
	for i := range members {
		mb := &members[i]
		if mb.Missing {
			continue
		}
		n++
		e, ok := mb.Clock.Bound()
		if !ok {
			why := "its clock was not read"
			if mb.Clock != nil {
				why = "its kernel reports the clock unsynchronised"
				if mb.Clock.Unknown != "" {
					why = mb.Clock.Unknown
				}
			}
			return 0, false, fmt.Sprintf("shard %d gives no bound on its wall clock (%s): the shards' relative placement is unknown", mb.Index, why)
		}
		if e > a {
			a, b = e, a
		} else if e > b {
			b = e
		}
	}
	if n <= 1 {
		return 0, true, ""
	}
	return a + b, true, ""
}

// validateSharding checks manifest.shard and manifest.shards.
func validateSharding(ps *problems, m *Manifest) {
	if m.Shard == nil && m.Shards == nil {
		return
	}
	if m.Shard != nil && m.Shards != nil {
		ps.add("shards", "a run is a shard (shard) or merged from shards (shards), not both")
		return
	}
	count, field := 0, "shard"
	if s := m.Shard; s != nil {
		count = s.Count
		validateShard(ps, m, s)
	}
	if s := m.Shards; s != nil {
		field = "shards"
		count = s.Count
		if !validateShards(ps, m, s) {
			return
		}
	}
	validateShardedLoad(ps, m, field, count)
}

// validateShard checks manifest.shard, one shard's own statement: its
// place in the split, its requested start and its clock. It is
// validateSharding's first phase, named so each shape of a sharded run is
// checked in a function of its own.
func validateShard(ps *problems, m *Manifest, s *Shard) {
	if s.Count < 1 || s.Count > MaxShards {
		ps.add("shard.count", "%d is out of range 1..%d", s.Count, MaxShards)
	} else if s.Index < 0 || s.Index >= s.Count {
		ps.add("shard.index", "%d is out of range [0, %d)", s.Index, s.Count)
	}
	if s.StartAt != "" {
		at, err := time.Parse(time.RFC3339Nano, s.StartAt)
		switch late, ok := ShardLateNS(m.EpochUnixNS, at); {
		case err != nil:
			ps.add("shard.start_at", "must be an RFC 3339 time, got %q", s.StartAt)
		case m.EpochUnixNS <= 0: // epoch_unix_ns is checked on its own
		case !ok:
			ps.add("shard.start_at", "%s is too far from epoch_unix_ns for late_ns to be stated in nanoseconds", s.StartAt)
		case s.LateNS != late:
			ps.add("shard.late_ns", "is %d, but epoch_unix_ns minus start_at is %d", s.LateNS, late)
		}
	}
	validateClock(ps, "shard.clock", s.Clock)
}

// validateShards checks manifest.shards, a merged run's account of its
// shards. It returns false when the count or the member list is too
// broken for the load checks that follow to mean anything
// (validateSharding then stops, as it always has).
func validateShards(ps *problems, m *Manifest, s *Shards) bool {
	if s.Count < 1 || s.Count > MaxShards {
		ps.add("shards.count", "%d is out of range 1..%d", s.Count, MaxShards)
		return false
	}
	if s.Split != ShardSplitV1 {
		ps.add("shards.split", "must be %q, got %q", ShardSplitV1, s.Split)
	}
	if len(s.Members) != s.Count {
		ps.add("shards.members", "has %d entries, shards.count is %d (one per shard, missing ones marked missing)", len(s.Members), s.Count)
		return false
	}
	gap := false
	for i := range s.Members {
		if validateShardMember(ps, m, i, &s.Members[i]) {
			gap = true
		}
	}
	if gap && !m.Incomplete {
		ps.add("incomplete", "a shard is missing or incomplete, so the run must be marked incomplete")
	}
	want, ok, why := TimelineUncertainty(s.Members)
	switch {
	case ok && (s.TimelineUncertaintyNS == nil || *s.TimelineUncertaintyNS != want):
		ps.add("shards.timeline_uncertainty_ns", "must be %d (the two largest members' clock bounds summed)", want)
	case !ok && s.TimelineUncertaintyNS != nil:
		ps.add("shards.timeline_uncertainty_ns", "must be null: %s", why)
	case !ok && s.UncertaintyReason == "":
		ps.add("shards.uncertainty_reason", "must say why the timeline uncertainty is unknown")
	}
	return true
}

// validateShardMember checks shards.members[i], one merged shard's entry,
// and reports whether it leaves a gap in the run (missing or
// incomplete): the member rules in one place, apart from the list's.
func validateShardMember(ps *problems, m *Manifest, i int, mb *ShardMember) (gap bool) {
	f := fmt.Sprintf("shards.members[%d]", i)
	if mb.Index != i {
		ps.add(f+".index", "is %d, want %d (members in shard order)", mb.Index, i)
	}
	if mb.OffsetNS < 0 {
		ps.add(f+".offset_ns", "must not be negative")
	}
	if !mb.Missing && mb.OffsetNS != mb.EpochUnixNS-m.EpochUnixNS {
		ps.add(f+".offset_ns", "is %d, but the shard's epoch_unix_ns minus the run's is %d", mb.OffsetNS, mb.EpochUnixNS-m.EpochUnixNS)
	}
	validateClock(ps, f+".clock", mb.Clock)
	validateShardPull(ps, f+".pulled", mb.Pulled)
	if mb.Missing {
		if mb.Pulled != nil {
			ps.add(f+".pulled", "a missing shard was not pulled")
		}
		if mb.Records != 0 || mb.RunID != "" {
			ps.add(f, "is marked missing but names a run or records")
		}
		return true
	}
	if mb.RunID == "" {
		ps.add(f+".run_id", "must name the shard run merged")
	}
	return mb.Incomplete
}

// validateShardedLoad checks what sharding asks of manifest.load (field
// names the shard or shards object, count its shard count): the split
// rule needs benchseal's generator, a bounded number of per-shard
// counters, and closed-loop points that count their requests.
func validateShardedLoad(ps *problems, m *Manifest, field string, count int) {
	if m.Load.Generator != GeneratorBenchsealV1 {
		ps.add(field, "a sharded run needs load.generator %q (the split rule numbers its requests)", GeneratorBenchsealV1)
	}
	if hi, lo := bits.Mul64(uint64(max(count, 1)), uint64(len(m.Load.Points)*max(m.Load.Repeats, 1))); hi != 0 || lo > MaxShardCells {
		ps.add(field+".count", "shards × points × repeats is more than the limit of %d", MaxShardCells)
	}
	if m.Load.Mode == ModeConcurrency {
		for i, p := range m.Load.Points {
			if p.Requests == 0 {
				ps.add(fmt.Sprintf("load.points[%d].requests", i), "a sharded closed-loop point needs a request count (nothing numbers a duration-bounded closed loop's requests across shards)")
			}
		}
		if m.Load.Warmup.Duration > 0 && m.Load.Warmup.Requests == 0 {
			ps.add("load.warmup.requests", "a sharded closed-loop warmup needs a request count (nothing numbers a duration-bounded closed loop's requests across shards)")
		}
	}
}

func validateClock(ps *problems, field string, c *Clock) {
	if c == nil {
		return
	}
	if c.Source != "adjtimex" && c.Source != "none" {
		ps.add(field+".source", "must be \"adjtimex\" or \"none\", got %q", c.Source)
	}
	if c.MaxErrorNS < 0 || c.EstErrorNS < 0 {
		ps.add(field, "error bounds must not be negative")
	}
	if c.Source == "none" && (c.Synced || c.MaxErrorNS != 0) {
		ps.add(field, "a clock that was not asked (source none) states no sync and no bound")
	}
}

// shardOf returns the shard of request k of a phase of the point of cell
// (point index × repeats + repeat).
func (c *RecordChecker) shardOf(cell int, k int64) int {
	if c.shards <= 1 {
		return 0
	}
	return ShardOf(c.m.Load.Mode, c.m.Load.Points[cell/c.repeats].Concurrency, c.shards, k)
}

// recordShard returns rec's shard when it is in range, else 0 (checkShard
// reports it).
func (c *RecordChecker) recordShard(rec *Record) int {
	if c.shards <= 1 || rec.Shard == nil || *rec.Shard < 0 || *rec.Shard >= int64(c.shards) {
		return 0
	}
	return int(*rec.Shard)
}

// checkShard checks a record's shard against the manifest: absent in a
// run that is not sharded, the run's own index in a shard run, a merged
// member's index in a merged run.
func (c *RecordChecker) checkShard(rec *Record, add func(field, format string, args ...any)) {
	if c.m == nil {
		return
	}
	switch {
	case c.m.Shard == nil && c.m.Shards == nil:
		if rec.Shard != nil {
			add("shard", "is set, but the manifest declares no sharding (shard or shards)")
		}
	case rec.Shard == nil:
		add("shard", "is missing: every record of a sharded run names the shard that sent it")
	case c.shardIdx >= 0 && *rec.Shard != int64(c.shardIdx):
		add("shard", "is %d in the run of %s", *rec.Shard, shardDesc(c.shardIdx, c.shards))
	case *rec.Shard < 0 || *rec.Shard >= int64(c.shards):
		add("shard", "%d is out of range [0, %d)", *rec.Shard, c.shards)
	case c.shardRecs != nil:
		if c.shardRecs[*rec.Shard] == 0 || rec.SentNS < c.shardFirst[*rec.Shard] {
			c.shardFirst[*rec.Shard] = rec.SentNS
		}
		c.shardRecs[*rec.Shard]++
		if c.m.Shards.Members[*rec.Shard].Missing {
			add("shard", "%d is marked missing in manifest.shards.members, yet sent this request", *rec.Shard)
		}
	}
}

// checkShardCounts compares, in Finish, a merged run's records per shard
// with manifest.shards.members[].records.
func (c *RecordChecker) checkShardCounts(add func(field, format string, args ...any)) {
	if c.shardRecs == nil {
		return
	}
	for i, n := range c.shardRecs {
		mb := &c.m.Shards.Members[i]
		if want := mb.Records; n != want {
			add(fmt.Sprintf("shards.members[%d].records", i), "is %d, but %d records name shard %d", want, n, i)
		}
		if n == 0 || mb.Missing {
			continue
		}
		// A shard's epoch is read just before its first request, and
		// merge adds its offset_ns to every send: its earliest send lies
		// within ShardFirstSendSlackNS after its offset.
		switch first := c.shardFirst[i] - mb.OffsetNS; {
		case first < 0:
			add(fmt.Sprintf("shards.members[%d].offset_ns", i), "is %d, but shard %d's earliest record was sent at %d ns, %s before it: the records contradict the shard's declared epoch (epoch_unix_ns %d)",
				mb.OffsetNS, i, c.shardFirst[i], Duration(-first), mb.EpochUnixNS)
		case first > ShardFirstSendSlackNS:
			add(fmt.Sprintf("shards.members[%d].offset_ns", i), "is %d, but shard %d's earliest record was sent at %d ns, %s after it (a shard sends its first request just after its epoch is read; at most %s): the records contradict the shard's declared epoch (epoch_unix_ns %d)",
				mb.OffsetNS, i, c.shardFirst[i], Duration(first), Duration(ShardFirstSendSlackNS), mb.EpochUnixNS)
		}
	}
}

// ShardFirstSendSlackNS bounds how long after its epoch a shard sends its
// first request: capture reads the epoch, writes the manifest, opens the
// records file and (with --reset-prefix-cache) resets the server's cache
// before the first send; sharded captures carry no scrapes. Honest shards
// of the merge tests sent theirs within milliseconds.
const ShardFirstSendSlackNS = 10_000_000_000

// noShare reports whether this shard run's share of point i's measured
// requests is empty (a closed-loop point with fewer workers than shards).
func (c *RecordChecker) noShare(i int) bool {
	if c.shardIdx < 0 {
		return false
	}
	p := &c.m.Load.Points[i]
	return p.Requests > 0 && ShardRequests(c.m.Load.Mode, p.Concurrency, c.shards, c.shardIdx, int64(p.Requests)) == 0
}

// ShardLateNS returns how late a shard whose epoch is epochUnixNS began
// after the common start at (negative: early), and false when that does
// not fit in int64 nanoseconds (starts about 292 years apart).
func ShardLateNS(epochUnixNS int64, at time.Time) (int64, bool) {
	d := time.Unix(0, epochUnixNS).Sub(at) // saturates instead of overflowing
	if d == math.MaxInt64 || d == math.MinInt64 {
		return 0, false
	}
	return int64(d), true
}
