package schema

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"

	"github.com/benchseal/benchseal/internal/digits"
)

// Prefix-cache states of a point × repeat (manifest.server_state.points[]
// prefix_cache): the engine's prefix cache when the point's first request
// (warmup or measured) was sent.
const (
	PrefixCacheEmpty   = "empty"
	PrefixCacheWarm    = "warm"
	PrefixCacheUnknown = "unknown"
	// PrefixCacheDisabled: the engine ran without a prefix cache (the
	// publisher's engine.prefix_cache, declared).
	PrefixCacheDisabled = "disabled"
)

// Sources of a server-state fact: measured by capture (a recorded reset
// call, a stored scrape), or the publisher's declaration, which nothing
// in the run backs.
const (
	StateReset    = "reset"
	StateMeasured = "measured"
	StateDeclared = "declared"
)

// Reset endpoints capture knows (POST): vLLM's and SGLang's; llama.cpp's
// is one call per slot (SlotErasePath).
const (
	ResetVLLM   = "/reset_prefix_cache"
	ResetSGLang = "/flush_cache"
)

// SlotErasePath is llama.cpp's reset of one slot's prompt cache: POST
// /slots/ID?action=erase (501 unless the server runs with
// --slot-save-path).
func SlotErasePath(id int) string { return "/slots/" + strconv.Itoa(id) + "?action=erase" }

var slotEraseRE = regexp.MustCompile(`^/slots/(0|[1-9][0-9]{0,8})\?action=erase$`)

// ServerState is what capture measured or the publisher declared about the
// server's state (manifest.server_state): whether it was freshly started,
// and per point × repeat the warmup's duration and the prefix cache's
// state. Nil in runs that say nothing about it.
type ServerState struct {
	// Fresh says whether the server was freshly started for the run; nil:
	// not stated.
	Fresh *FreshStart `json:"fresh,omitempty"`
	// Points holds one entry per point × repeat capture ran, in run order.
	Points []PointState `json:"points,omitempty"`
}

// FreshStart says whether the server had served anything before the run.
type FreshStart struct {
	Fresh bool `json:"fresh"`
	// Source is measured (from Scrape) or declared (capture --server-fresh).
	Source string `json:"source"`
	// Scrape is the attachment (server-metrics/NAME.prom) of the engine's
	// /metrics scraped before capture sent any request, and SHA256 its
	// digest: measured only.
	Scrape string `json:"scrape,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// RequestsBefore and PromptTokensBefore are the engine's totals of
	// finished requests and prompt tokens in that scrape; Fresh (measured)
	// is both being zero.
	RequestsBefore     *float64 `json:"requests_before,omitempty"`
	PromptTokensBefore *float64 `json:"prompt_tokens_before,omitempty"`
	// UptimeNS is the scrape's wall-clock time minus the engine's
	// process_start_time_seconds (server and client clocks may differ);
	// nil when the engine does not expose it.
	UptimeNS *int64 `json:"uptime_ns,omitempty"`
}

// PointState is the server state of one point × repeat.
type PointState struct {
	Point  string `json:"point"`
	Repeat int    `json:"repeat"`
	// WarmupNS is how long the point's warmup phase ran, from before its
	// first send to after its last request ended (capture's clock); nil
	// without a warmup.
	WarmupNS *int64 `json:"warmup_ns,omitempty"`
	// PrefixCache is empty, warm or unknown.
	PrefixCache string `json:"prefix_cache"`
	// PrefixCacheSource is reset (a recorded successful Reset before the
	// point), declared (the publisher's word), or "" with unknown.
	PrefixCacheSource string `json:"prefix_cache_source,omitempty"`
	// Reset is capture's call of the engine's reset endpoint before the
	// point (capture --reset-prefix-cache); nil when none was made.
	Reset *CacheReset `json:"reset,omitempty"`
	// Cache is the prefix-cache use the engine itself reported for the
	// point's requests (measured); nil when no answer reported it.
	Cache *CacheUse `json:"cache,omitempty"`
}

// CacheUse sums, over the ok requests of one point × repeat (warmup and
// measured) whose answers reported cached prompt tokens (a record's
// server.cached_tokens or cache_n), the prompt tokens and the cached
// ones. FirstCached and FirstPrompt are the cached and the prompt tokens
// of the earliest-sent of them. A measured cache state is warm when that
// request found at least half its prompt cached (MeasuredWarm), empty
// otherwise: every prompt shares a few tokens (BOS, a chat template's
// opening) that an engine serves from its cache however fresh it is.
type CacheUse struct {
	Requests     int64 `json:"requests"`
	PromptTokens int64 `json:"prompt_tokens"`
	CachedTokens int64 `json:"cached_tokens"`
	FirstCached  int64 `json:"first_cached"`
	FirstPrompt  int64 `json:"first_prompt_tokens"`
}

// CacheTally sums a point × repeat's CacheUse from its records, in any
// order: capture while it runs, validate and replay from the records
// file, so all three apply one rule. The zero value is ready to use.
type CacheTally struct {
	use       CacheUse
	firstSent int64
	firstID   string
}

// Add counts rec when it ended ok and its answer reported cached prompt
// tokens (ServerReport.Cached); cached tokens beyond the prompt count as
// the prompt. The first request is the earliest sent, the smallest id
// among equal send times, so the result does not depend on the order
// records are added in.
func (t *CacheTally) Add(rec *Record) {
	n, ok := rec.Server.Cached()
	if !ok || rec.Status != StatusOK {
		return
	}
	n = min(max(n, 0), max(rec.InputTokens, 0))
	if t.use.Requests == 0 || rec.SentNS < t.firstSent || (rec.SentNS == t.firstSent && rec.ID < t.firstID) {
		t.firstSent, t.firstID = rec.SentNS, rec.ID
		t.use.FirstCached, t.use.FirstPrompt = n, max(rec.InputTokens, 0)
	}
	t.use.Requests++
	t.use.PromptTokens += max(rec.InputTokens, 0)
	t.use.CachedTokens += n
}

// Use returns the sum, nil when no record was counted.
func (t *CacheTally) Use() *CacheUse {
	if t.use.Requests == 0 {
		return nil
	}
	u := t.use
	return &u
}

// MeasuredState is the prefix-cache state the engine's own reports show
// for a point × repeat: warm (MeasuredWarm) or empty; "" for nil.
func (u *CacheUse) MeasuredState() string {
	switch {
	case u == nil:
		return ""
	case u.MeasuredWarm():
		return PrefixCacheWarm
	}
	return PrefixCacheEmpty
}

// Contradicts says how a point's stated prefix-cache state disagrees with
// the engine's reports u, "" when it does not: an empty cache whose first
// request found at least half its prompt cached, a warm one whose first
// request did not, a disabled one that served any prompt token from a
// cache. An unknown state contradicts nothing.
func (u *CacheUse) Contradicts(state string) string {
	if u == nil {
		return ""
	}
	switch state {
	case PrefixCacheEmpty, PrefixCacheWarm:
		if m := u.MeasuredState(); m != state {
			return fmt.Sprintf("the engine's reports say %s: its first request found %d of %d prompt tokens cached (warm from half)", m, u.FirstCached, u.FirstPrompt)
		}
	case PrefixCacheDisabled:
		if u.CachedTokens > 0 {
			return fmt.Sprintf("the engine reported %d of %d prompt tokens served from its cache over %d requests", u.CachedTokens, u.PromptTokens, u.Requests)
		}
	}
	return ""
}

// MeasuredWarm is the measured state's rule: the point's first request
// found at least half its prompt tokens cached.
func (u *CacheUse) MeasuredWarm() bool { return 2*u.FirstCached >= u.FirstPrompt && u.FirstCached > 0 }

// CacheReset records one attempt to empty the engine's prefix cache: the
// endpoints tried in order, and whether one answered 2xx.
type CacheReset struct {
	// AtNS is when the first call was sent and DoneNS when the last
	// answer arrived, in the run's clock.
	AtNS   int64       `json:"at_ns"`
	DoneNS int64       `json:"done_ns"`
	Calls  []ResetCall `json:"calls"`
	OK     bool        `json:"ok"`
}

// ResetCall is one POST to a reset endpoint.
type ResetCall struct {
	Path string `json:"path"`
	// Status is the HTTP status (0: no answer, Error says why).
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
}

// OK reports whether the call answered 2xx.
func (c ResetCall) OK() bool { return c.Status >= 200 && c.Status < 300 }

// validateServerState checks manifest.server_state: known states and
// sources, an empty cache of source reset backed by a recorded successful
// reset call, a measured fresh start backed by a stored scrape, and
// entries naming declared points and repeats once each.
func validateServerState(ps *problems, m *Manifest) {
	ss := m.ServerState
	if ss == nil {
		return
	}
	if f := ss.Fresh; f != nil {
		validateFreshStart(ps, f)
	}
	timed := m.Provenance.Field(FieldSent).Usable() && m.Provenance.Field(FieldEnd).Usable()
	seen := map[string]bool{}
	for i, p := range ss.Points {
		validatePointState(ps, m, fmt.Sprintf("server_state.points[%d]", i), p, timed, seen)
	}
}

// validateFreshStart checks server_state.fresh: a measured fresh start
// backed by its scrape and counts, a declared one carrying no
// measurement. One phase of validateServerState, the run-wide fact apart
// from the per-point ones.
func validateFreshStart(ps *problems, f *FreshStart) {
	switch f.Source {
	case StateMeasured:
		if !scrapeFileRE.MatchString(f.Scrape) || path.Clean(f.Scrape) != f.Scrape {
			ps.add("server_state.fresh.scrape", "a measured fresh start names its scrape server-metrics/NAME.prom, got %q", f.Scrape)
		}
		if !sha256RE.MatchString(f.SHA256) {
			ps.add("server_state.fresh.sha256", "must be 64 lowercase hex digits")
		}
		if f.RequestsBefore == nil || f.PromptTokensBefore == nil {
			ps.add("server_state.fresh", "a measured fresh start states requests_before and prompt_tokens_before")
		} else if f.Fresh != (*f.RequestsBefore == 0 && *f.PromptTokensBefore == 0) {
			ps.add("server_state.fresh.fresh", "is %v, but requests_before %s and prompt_tokens_before %s say %v",
				f.Fresh, digits.Shortest(*f.RequestsBefore), digits.Shortest(*f.PromptTokensBefore), !f.Fresh)
		}
	case StateDeclared:
		if f.Scrape != "" || f.SHA256 != "" || f.RequestsBefore != nil || f.PromptTokensBefore != nil || f.UptimeNS != nil {
			ps.add("server_state.fresh", "a declared fresh start carries no measurement (scrape, counts, uptime)")
		}
	default:
		ps.add("server_state.fresh.source", "must be %s, got %q", quoteList(StateMeasured, StateDeclared), f.Source)
	}
}

// validatePointState checks one server_state.points entry p (field f):
// its point and repeat declared and listed once (seen holds the ones
// before it), its warmup, reset call, cache use and prefix-cache state;
// timed says whether sent_ns and end_ns are measured, which a reset
// source needs. One point's rules, split from the list's loop.
func validatePointState(ps *problems, m *Manifest, f string, p PointState, timed bool, seen map[string]bool) {
	if p.PrefixCacheSource == StateReset && !timed {
		ps.add(f+".prefix_cache_source", "reset: an empty cache of source reset needs measured sent_ns and end_ns, to show the reset came after every earlier request ended and before the point's first")
	}
	declared := false
	for _, pt := range m.Load.Points {
		declared = declared || pt.Name == p.Point
	}
	if !declared {
		ps.add(f+".point", "%q is not a declared load point", p.Point)
	}
	if p.Repeat < 0 || (m.Load.Repeats > 0 && p.Repeat >= m.Load.Repeats) {
		ps.add(f+".repeat", "must be in [0, %d), got %d", m.Load.Repeats, p.Repeat)
	}
	key := fmt.Sprintf("%q/%d", p.Point, p.Repeat)
	if seen[key] {
		ps.add(f, "point %q repeat %d is listed twice", p.Point, p.Repeat)
	}
	seen[key] = true
	if p.WarmupNS != nil && *p.WarmupNS < 0 {
		ps.add(f+".warmup_ns", "must not be negative")
	}
	if r := p.Reset; r != nil {
		validateCacheReset(ps, f, r)
	}
	if cu := p.Cache; cu != nil && (cu.Requests < 1 || cu.PromptTokens < 0 || cu.CachedTokens < 0 || cu.CachedTokens > cu.PromptTokens || cu.FirstCached < 0 || cu.FirstCached > cu.FirstPrompt) {
		ps.add(f+".cache", "want requests ≥ 1, 0 ≤ cached_tokens ≤ prompt_tokens and 0 ≤ first_cached ≤ first_prompt_tokens; got %+v", *cu)
	}
	validatePrefixCache(ps, f, p)
}

// validateCacheReset checks a point's reset (field f names the point):
// known endpoints, llama.cpp slot erases not mixed with others, ok as the
// calls' answers say for that engine, and ordered times. Split from
// validatePointState: the reset's rules are a phase of their own.
func validateCacheReset(ps *problems, f string, r *CacheReset) {
	if len(r.Calls) == 0 {
		ps.add(f+".reset.calls", "a reset lists the calls it made")
	}
	anyOK, slots, allSlotsOK := false, 0, true
	for j, c := range r.Calls {
		switch {
		case slotEraseRE.MatchString(c.Path):
			slots++
			allSlotsOK = allSlotsOK && c.OK()
		case c.Path != ResetVLLM && c.Path != ResetSGLang:
			ps.add(fmt.Sprintf("%s.reset.calls[%d].path", f, j), "must be %s or /slots/ID?action=erase, got %q", quoteList(ResetVLLM, ResetSGLang), c.Path)
		default:
			anyOK = anyOK || c.OK()
		}
	}
	switch {
	case slots > 0 && slots < len(r.Calls):
		ps.add(f+".reset.calls", "mixes llama.cpp slot erases with other reset endpoints")
	case slots > 0 && r.OK != allSlotsOK:
		ps.add(f+".reset.ok", "is %v, but the calls say %v (a llama.cpp reset is ok when every slot's erase answered 2xx)", r.OK, allSlotsOK)
	case slots == 0 && r.OK != anyOK:
		ps.add(f+".reset.ok", "is %v, but the calls say %v (ok means one call answered 2xx)", r.OK, anyOK)
	}
	if r.AtNS < 0 || r.DoneNS < r.AtNS {
		ps.add(f+".reset", "at_ns %d and done_ns %d: want 0 ≤ at_ns ≤ done_ns", r.AtNS, r.DoneNS)
	}
}

// validatePrefixCache checks a point's prefix_cache state and its source
// (field f names the point): a reset source backed by a successful reset,
// a measured one agreeing with the cache use the engine reported, an
// unknown state with no source. Split from validatePointState: these are
// the state-by-source rules.
func validatePrefixCache(ps *problems, f string, p PointState) {
	switch p.PrefixCache {
	case PrefixCacheEmpty, PrefixCacheWarm, PrefixCacheDisabled:
		switch p.PrefixCacheSource {
		case StateReset:
			if p.PrefixCache != PrefixCacheEmpty || p.Reset == nil || !p.Reset.OK {
				ps.add(f+".prefix_cache_source", "reset: only an empty cache after a recorded successful reset (reset.ok) is of source reset")
			}
		case StateMeasured:
			if p.Cache == nil || p.PrefixCache == PrefixCacheDisabled || p.Cache.MeasuredWarm() != (p.PrefixCache == PrefixCacheWarm) {
				ps.add(f+".prefix_cache_source", "measured: the cache is warm when the point's first request found at least half its prompt cached (2 × cache.first_cached ≥ cache.first_prompt_tokens) and empty otherwise")
			}
		case StateDeclared:
		default:
			ps.add(f+".prefix_cache_source", "must be %s for a %s cache, got %q", quoteList(StateReset, StateMeasured, StateDeclared), p.PrefixCache, p.PrefixCacheSource)
		}
	case PrefixCacheUnknown:
		if p.PrefixCacheSource != "" {
			ps.add(f+".prefix_cache_source", "an unknown cache has no source, got %q", p.PrefixCacheSource)
		}
	default:
		ps.add(f+".prefix_cache", "must be %s, got %q", quoteList(PrefixCacheEmpty, PrefixCacheWarm, PrefixCacheDisabled, PrefixCacheUnknown), p.PrefixCache)
	}
}

// UnverifiedServerState lists, for verify's warnings, the server-state
// facts of m that only the publisher's word backs: a declared fresh
// start, and a declared empty or warm prefix cache.
func UnverifiedServerState(m *Manifest) []string {
	ss := m.ServerState
	if ss == nil {
		return nil
	}
	var out []string
	if f := ss.Fresh; f != nil && f.Source == StateDeclared {
		out = append(out, fmt.Sprintf("server_state.fresh %v is declared by the publisher (capture --server-fresh), not measured", f.Fresh))
	}
	for _, p := range ss.Points {
		if p.PrefixCacheSource == StateDeclared {
			out = append(out, fmt.Sprintf("point %s repeat %d: prefix cache %s is declared by the publisher, not backed by a recorded successful reset", p.Point, p.Repeat, p.PrefixCache))
		}
	}
	return out
}

// stateCheck checks records against manifest.server_state: a reset that
// makes a point's cache empty ended before the point's first request was
// sent and started after every request sent before it had ended (one
// still running could refill the cache), and a point's warmup_ns is not
// shorter than its warmup records' span (first send to last end).
type stateCheck struct {
	// resets are the resets behind an empty cache of source reset, by
	// start time; overlap holds, per entry of server_state.points, the
	// first record found in flight when its reset started.
	resets  []resetStart
	overlap map[int]*inFlight
	// per cell (point index × repeats + repeat): the entry's index in
	// server_state.points, -1 when none.
	entry          []int
	firstSent      []int64 // any phase, valid once seen
	warmFirst      []int64
	warmEnd        []int64
	warmSeen, seen []bool
	// cache sums, per cell, the cached prompt tokens the records report.
	cache []CacheTally
}

func newStateCheck(m *Manifest, points map[string]int, repeats int) *stateCheck {
	ss := m.ServerState
	if ss == nil || len(ss.Points) == 0 || !m.Provenance.Field(FieldSent).Usable() || !m.Provenance.Field(FieldEnd).Usable() {
		return nil
	}
	n := len(m.Load.Points) * repeats
	s := &stateCheck{entry: make([]int, n), firstSent: make([]int64, n), warmFirst: make([]int64, n), warmEnd: make([]int64, n),
		warmSeen: make([]bool, n), seen: make([]bool, n), cache: make([]CacheTally, n)}
	for i := range s.entry {
		s.entry[i] = -1
	}
	for i, p := range ss.Points {
		pi, ok := points[p.Point]
		if ok && p.Repeat >= 0 && p.Repeat < repeats && s.entry[pi*repeats+p.Repeat] < 0 {
			s.entry[pi*repeats+p.Repeat] = i
		}
	}
	for i, p := range ss.Points {
		if p.PrefixCacheSource == StateReset && p.Reset != nil {
			s.resets = append(s.resets, resetStart{at: p.Reset.AtNS, entry: i})
		}
	}
	slices.SortStableFunc(s.resets, func(a, b resetStart) int { return cmp.Compare(a.at, b.at) })
	return s
}

// inFlight is a record that was running when a reset started.
type inFlight struct {
	id, point string
	repeat    int
	sent, end int64
}

// resetStart is when the reset of server_state.points[entry] started.
type resetStart struct {
	at    int64
	entry int
}

func (s *stateCheck) add(cell int, rec *Record) {
	// The first reset to start after rec was sent: rec overlaps it when
	// it ended later (a later reset can then only be flagged by another
	// record, which suffices: the run is invalid either way).
	if j, _ := slices.BinarySearchFunc(s.resets, rec.SentNS+1, func(r resetStart, t int64) int { return cmp.Compare(r.at, t) }); j < len(s.resets) &&
		s.resets[j].at < rec.EndNS && s.overlap[s.resets[j].entry] == nil {
		if s.overlap == nil {
			s.overlap = map[int]*inFlight{}
		}
		s.overlap[s.resets[j].entry] = &inFlight{id: rec.ID, point: rec.Point, repeat: rec.Repeat, sent: rec.SentNS, end: rec.EndNS}
	}
	if !s.seen[cell] || rec.SentNS < s.firstSent[cell] {
		s.firstSent[cell], s.seen[cell] = rec.SentNS, true
	}
	s.cache[cell].Add(rec)
	if rec.Phase != PhaseWarmup {
		return
	}
	if !s.warmSeen[cell] || rec.SentNS < s.warmFirst[cell] {
		s.warmFirst[cell] = rec.SentNS
	}
	if !s.warmSeen[cell] || rec.EndNS > s.warmEnd[cell] {
		s.warmEnd[cell] = rec.EndNS
	}
	s.warmSeen[cell] = true
}

func (s *stateCheck) finish(m *Manifest, add func(field, format string, args ...any)) {
	for cell, i := range s.entry {
		if i < 0 {
			continue
		}
		p := m.ServerState.Points[i]
		f := fmt.Sprintf("server_state.points[%d]", i)
		if r := p.Reset; r != nil && p.PrefixCacheSource == StateReset && s.seen[cell] && s.firstSent[cell] < r.DoneNS {
			add(f+".reset", "ended at %d, after the point's first request was sent at %d: the cache was not shown empty for it", r.DoneNS, s.firstSent[cell])
		}
		if r := s.overlap[i]; r != nil {
			add(f+".reset", "started at %d while record id %q (point %s repeat %d, sent at %d) was still in flight until %d: a request running after the reset can refill the cache, so it was not shown empty",
				p.Reset.AtNS, r.id, r.point, r.repeat, r.sent, r.end)
		}
		s.finishCache(f, p, s.cache[cell].Use(), add)
		if w := p.WarmupNS; w != nil && s.warmSeen[cell] && s.warmEnd[cell]-s.warmFirst[cell] > *w {
			add(f+".warmup_ns", "%d is shorter than the span of its warmup records (%d, first send to last end)", *w, s.warmEnd[cell]-s.warmFirst[cell])
		}
	}
}

// finishCache checks a point's stated cache use and state against the
// cached prompt tokens its records report (u, nil when none does): the
// publisher's word, a recorded reset and a stated measurement alike.
func (s *stateCheck) finishCache(f string, p PointState, u *CacheUse, add func(field, format string, args ...any)) {
	switch {
	case u == nil && p.Cache != nil:
		add(f+".cache", "states the engine's cache reports, but no ok record of point %s repeat %d carries server.cached_tokens or server.cache_n", p.Point, p.Repeat)
	case u != nil && p.Cache == nil:
		add(f+".cache", "is missing: the records of point %s repeat %d report cached prompt tokens (%+v)", p.Point, p.Repeat, *u)
	case u != nil && *u != *p.Cache:
		add(f+".cache", "%+v, but the records of point %s repeat %d sum to %+v", *p.Cache, p.Point, p.Repeat, *u)
	}
	if why := u.Contradicts(p.PrefixCache); why != "" {
		src := p.PrefixCacheSource
		if src == "" {
			src = "no source"
		}
		add(f+".prefix_cache", "%s (%s), but %s", p.PrefixCache, src, why)
	}
}
