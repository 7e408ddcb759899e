// Package progress carries how far a long operation has got from the
// library doing it (artifact's pack, verify, replay, compare) to the
// command that shows it. The libraries never print: they report through
// the Func a caller put in their context, and do nothing when there is
// none.
package progress

import (
	"context"
	"fmt"
	"io"
	"sync"
)

// Update is one report: the phase a library is in and how much of it is
// done. A phase lasts until the next one starts or the library's call
// returns.
type Update struct {
	// Phase names the work, e.g. "pack: read, validate and compress records".
	Phase string
	// Unit is what Done and Total count: "records" or "bytes".
	Unit string
	// Done is the amount finished so far in this phase; it never goes
	// down within a phase.
	Done int64
	// Total is the phase's whole amount, or -1 when it is not known in
	// advance.
	Total int64
}

// Func receives updates. It is called from the goroutine doing the work,
// possibly from several at once, and as often as the work advances: it
// must be cheap and safe for concurrent use (the caller throttles what it
// shows).
type Func func(Update)

type key struct{}

// With returns ctx carrying f; a nil f leaves ctx as it is.
func With(ctx context.Context, f Func) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, f)
}

// Within returns ctx whose Func, if any, sees every phase named as part
// of what: "what: phase" (compare's inputs, one after the other).
func Within(ctx context.Context, what string) context.Context {
	f, _ := ctx.Value(key{}).(Func)
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, Func(func(u Update) {
		u.Phase = what + ": " + u.Phase
		f(u)
	}))
}

// Off returns ctx with no Func: work done on it for a caller that
// reports the same work itself reports nothing.
func Off(ctx context.Context) context.Context {
	if ctx.Value(key{}) == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, Func(nil))
}

// Phase starts reporting a phase on ctx's Func: the returned Counter is a
// no-op when ctx has none.
func Phase(ctx context.Context, phase, unit string, total int64) *Counter {
	f, _ := ctx.Value(key{}).(Func)
	if f == nil {
		return nil
	}
	c := &Counter{f: f, u: Update{Phase: phase, Unit: unit, Total: total}}
	f(c.u)
	return c
}

// Counter reports one phase. A nil Counter does nothing, so callers need
// not check. It is not safe for concurrent use.
type Counter struct {
	f Func
	u Update
}

// Add reports n more units done.
func (c *Counter) Add(n int64) {
	if c == nil || n <= 0 {
		return
	}
	c.u.Done += n
	c.f(c.u)
}

// Reader returns r counting the bytes read from it on c.
func Reader(r io.Reader, c *Counter) io.Reader {
	if c == nil {
		return r
	}
	return &reader{r, c}
}

type reader struct {
	r io.Reader
	c *Counter
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.c.Add(int64(n))
	return n, err
}

// Recorder keeps every update it is given, for tests of the libraries
// that report.
type Recorder struct {
	mu      sync.Mutex
	updates []Update
}

// Func returns the recorder's Func.
func (r *Recorder) Func() Func {
	return func(u Update) {
		r.mu.Lock()
		r.updates = append(r.updates, u)
		r.mu.Unlock()
	}
}

// Last returns, per phase, the last update of it, in the order the
// phases started; it fails when a phase's counts went down, its total
// changed or its phase came back after another had started.
func (r *Recorder) Last() ([]Update, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Update
	for _, u := range r.updates {
		if n := len(out); n > 0 && out[n-1].Phase == u.Phase {
			if u.Done < out[n-1].Done || u.Total != out[n-1].Total {
				return nil, fmt.Errorf("phase %q went from %d of %d to %d of %d", u.Phase, out[n-1].Done, out[n-1].Total, u.Done, u.Total)
			}
			out[n-1] = u
			continue
		}
		for _, o := range out {
			if o.Phase == u.Phase {
				return nil, fmt.Errorf("phase %q started again", u.Phase)
			}
		}
		out = append(out, u)
	}
	return out, nil
}
