// The server's state: a fresh start, each point's warmup and prefix cache.

package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// resetTimeout bounds one call of a prefix-cache reset endpoint.
const resetTimeout = 30 * time.Second

// FreshScrape is the attachment name of the scrape taken before capture
// sent any request, which a measured fresh start is read from.
const FreshScrape = schema.ServerMetricsDir + "/fresh.prom"

// stateKeeper builds manifest.server_state while the run goes.
type stateKeeper struct {
	r    *runner
	base string
	// paths are the reset endpoints in the order to try them; after a
	// success, the one that answered comes first. slots, when positive,
	// is llama.cpp's slot count: a reset erases every slot instead.
	paths []string
	slots int
	// declared is the publisher's engine.prefix_cache (empty or warm),
	// used per point when no reset is asked for.
	declared string
	fresh    *schema.FreshStart
	freshRaw []byte
	points   []*schema.PointState
	cur      *schema.PointState
	// obs sums the cached prompt tokens the engine reported, per point ×
	// repeat (noteRecord, from every request goroutine).
	obsMu sync.Mutex
	obs   map[cellKey]*schema.CacheTally
}

// cellKey names a point × repeat.
type cellKey struct {
	point  string
	repeat int
}

// noteRecord adds an ended request to its point's cache use
// (schema.CacheTally).
func (k *stateKeeper) noteRecord(c *cell, rec *schema.Record) {
	if k == nil {
		return
	}
	k.obsMu.Lock()
	defer k.obsMu.Unlock()
	key := cellKey{c.pt.Name, c.repeat}
	t := k.obs[key]
	if t == nil {
		t = &schema.CacheTally{}
		k.obs[key] = t
	}
	t.Add(rec)
}

// measure sets each point's cache use and, from it, its measured state
// (schema.CacheUse.MeasuredWarm). A recorded reset stands when the
// engine's report agrees with it (the first request found the cache
// empty), and a declared disabled cache when nothing was cached at all;
// otherwise the measurement wins over both (the reset did not empty the
// cache; the cache was not off).
func (k *stateKeeper) measure() {
	k.obsMu.Lock()
	defer k.obsMu.Unlock()
	for _, ps := range k.points {
		o := k.obs[cellKey{ps.Point, ps.Repeat}]
		if o == nil || o.Use() == nil {
			continue
		}
		use := *o.Use()
		ps.Cache = &use
		switch {
		case ps.PrefixCacheSource == schema.StateReset && !use.MeasuredWarm():
		case ps.PrefixCache == schema.PrefixCacheDisabled && use.CachedTokens == 0:
		case use.MeasuredWarm():
			ps.PrefixCache, ps.PrefixCacheSource = schema.PrefixCacheWarm, schema.StateMeasured
		default:
			ps.PrefixCache, ps.PrefixCacheSource = schema.PrefixCacheEmpty, schema.StateMeasured
		}
	}
}

// newStateKeeper resolves the fresh-start evidence before any request is
// sent (even preflight's): first, scraped by the scraper when there is
// one, measured when the engine's counters are in it; else declared when
// Options.ServerFresh says so. A declared fresh start the scrape
// contradicts stops the run before anything is written.
func (r *runner) newStateKeeper(base string, scr *scraper, m *schema.Manifest, si *ServerInfo) (*stateKeeper, error) {
	k := &stateKeeper{r: r, base: base, obs: map[cellKey]*schema.CacheTally{}}
	llama := (si != nil && si.Speaks == EngineLlamaCpp) || (scr != nil && scr.engine == servermetrics.EngineLlamaCpp)
	switch {
	case r.o.ResetPrefixCache && llama && si != nil && si.Slots > 0:
		k.slots = si.Slots
	case r.o.ResetPrefixCache:
		k.paths = []string{schema.ResetVLLM, schema.ResetSGLang}
		if scr != nil && scr.engine == servermetrics.EngineSGLang {
			k.paths = []string{schema.ResetSGLang, schema.ResetVLLM}
		}
	case m.Engine.PrefixCache == schema.CacheDisabled:
		k.declared = schema.PrefixCacheDisabled
	case m.Engine.PrefixCache == schema.CacheEmpty || m.Engine.PrefixCache == schema.CacheWarm:
		k.declared = m.Engine.PrefixCache
	}
	if scr != nil && scr.first != nil {
		snap, err := servermetrics.Parse(bytes.NewReader(scr.first))
		if err == nil {
			if sv, ok := servermetrics.ServedBefore(snap); ok {
				reqs, toks := sv.Requests, sv.PromptTokens
				h := sha256.Sum256(scr.first)
				k.fresh = &schema.FreshStart{Fresh: sv.Fresh(), Source: schema.StateMeasured, Scrape: FreshScrape, SHA256: hex.EncodeToString(h[:]),
					RequestsBefore: &reqs, PromptTokensBefore: &toks}
				if sv.HaveStart {
					up := scr.firstWall.UnixNano() - int64(sv.ProcessStart*1e9)
					k.fresh.UptimeNS = &up
				}
				k.freshRaw = scr.first
				if r.o.ServerFresh && !sv.Fresh() {
					return nil, errcond.Errorf(ErrNotFresh, "capture failed: the server is not freshly started: --server-fresh declares it, but its /metrics before the run count %s finished requests and %s prompt tokens",
						digits.Shortest(reqs), digits.Shortest(toks))
				}
			}
		}
	}
	if k.fresh == nil && r.o.ServerFresh {
		k.fresh = &schema.FreshStart{Fresh: true, Source: schema.StateDeclared}
	}
	return k, nil
}

// writeFresh stores the fresh-start scrape as an attachment (the run
// directory exists by now).
func (k *stateKeeper) writeFresh() error {
	if k.freshRaw == nil {
		return nil
	}
	p := filepath.Join(k.r.o.OutDir, schema.AttachmentsDir, filepath.FromSlash(FreshScrape))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return schema.WriteFileAtomic(p, k.freshRaw, 0o644)
}

// begin is called before every cell: the first cell of a point × repeat
// opens its state entry and, when asked, resets the prefix cache first.
func (k *stateKeeper) begin(ctx context.Context, c *cell) {
	if k.cur != nil && k.cur.Point == c.pt.Name && k.cur.Repeat == c.repeat {
		return
	}
	ps := &schema.PointState{Point: c.pt.Name, Repeat: c.repeat, PrefixCache: schema.PrefixCacheUnknown}
	switch {
	case k.slots > 0:
		ps.Reset = k.eraseSlots(ctx)
		if ps.Reset.OK {
			ps.PrefixCache, ps.PrefixCacheSource = schema.PrefixCacheEmpty, schema.StateReset
		}
	case k.paths != nil:
		ps.Reset = k.reset(ctx)
		if ps.Reset.OK {
			ps.PrefixCache, ps.PrefixCacheSource = schema.PrefixCacheEmpty, schema.StateReset
		}
	case k.declared != "":
		ps.PrefixCache, ps.PrefixCacheSource = k.declared, schema.StateDeclared
	}
	k.points = append(k.points, ps)
	k.cur = ps
}

// warmed records how long the current point's warmup ran.
func (k *stateKeeper) warmed(d int64) { k.cur.WarmupNS = &d }

// reset calls the reset endpoints in order until one answers 2xx. A
// failure is recorded, never fatal: the point's cache state is then
// unknown (docs/capture.md).
func (k *stateKeeper) reset(ctx context.Context) *schema.CacheReset {
	cr := &schema.CacheReset{AtNS: k.r.now(), Calls: []schema.ResetCall{}}
	for i, p := range k.paths {
		call := k.call(ctx, p)
		cr.Calls = append(cr.Calls, call)
		if call.OK() {
			cr.OK = true
			if i > 0 {
				k.paths = append([]string{p}, append(k.paths[:i:i], k.paths[i+1:]...)...)
			}
			break
		}
	}
	cr.DoneNS = k.r.now()
	return cr
}

// eraseSlots empties every slot's prompt cache of llama.cpp's server
// (POST /slots/{id}?action=erase, id 0 … slots−1); the reset is ok only
// when every slot answered 2xx. A server started without
// --slot-save-path answers 501, and the call records its message.
func (k *stateKeeper) eraseSlots(ctx context.Context) *schema.CacheReset {
	cr := &schema.CacheReset{AtNS: k.r.now(), Calls: []schema.ResetCall{}}
	ok := true
	for id := range k.slots {
		call := k.call(ctx, schema.SlotErasePath(id))
		cr.Calls = append(cr.Calls, call)
		if !call.OK() {
			ok = false
			break // the server refuses them all alike (501): one call says it
		}
	}
	cr.OK = ok
	cr.DoneNS = k.r.now()
	return cr
}

func (k *stateKeeper) call(ctx context.Context, path string) schema.ResetCall {
	out := schema.ResetCall{Path: path}
	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, k.base+path, nil)
	if err != nil {
		out.Error = schema.EscapeText(err.Error(), false)
		return out
	}
	if k.r.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+k.r.o.APIKey)
	}
	// A fresh connection: a kept-alive one the server closed after a
	// stream would fail the call before it reached the server.
	resp, err := k.r.fresh.Do(req)
	if err != nil {
		out.Error = schema.EscapeText(strings.TrimSpace(err.Error()), false)
		return out
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	out.Status = resp.StatusCode
	if !out.OK() {
		out.Error = schema.EscapeText("HTTP "+resp.Status+": "+serverMessage(body), false)
	}
	return out
}

// record writes manifest.server_state (nothing when there is nothing to
// say, so runs without these features keep their manifest).
func (k *stateKeeper) record(m *schema.Manifest) {
	if k == nil {
		return
	}
	k.measure()
	ss := &schema.ServerState{Fresh: k.fresh}
	interesting := k.fresh != nil || k.paths != nil || k.slots > 0 || k.declared != ""
	for _, p := range k.points {
		ss.Points = append(ss.Points, *p)
		interesting = interesting || p.WarmupNS != nil || p.Cache != nil
	}
	if interesting {
		m.ServerState = ss
	}
}
