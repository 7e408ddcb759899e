package progress

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestPhaseReportsToTheContextsFunc(t *testing.T) {
	var r Recorder
	ctx := With(context.Background(), r.Func())
	c := Phase(ctx, "read", "bytes", 10)
	io.Copy(io.Discard, Reader(strings.NewReader("0123456789"), c))
	d := Phase(ctx, "count", "records", -1)
	d.Add(2)
	d.Add(0) // nothing done: no report
	d.Add(3)
	got, err := r.Last()
	if err != nil {
		t.Fatal(err)
	}
	want := []Update{{Phase: "read", Unit: "bytes", Done: 10, Total: 10}, {Phase: "count", Unit: "records", Done: 5, Total: -1}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("updates %+v, want %+v", got, want)
	}
	if len(r.updates) != 1+1+1+2 {
		t.Errorf("%d updates, want 5 (each phase's start, then every Add with work done; the reader's last Read at EOF has none): %+v", len(r.updates), r.updates)
	}
}

func TestNoFuncNoReports(t *testing.T) {
	for _, ctx := range []context.Context{context.Background(), Off(With(context.Background(), func(Update) { t.Fatal("reported under Off") }))} {
		c := Phase(ctx, "x", "records", 1)
		if c != nil {
			t.Fatal("a counter without a Func")
		}
		c.Add(1) // a nil counter does nothing
		if r := Reader(strings.NewReader("a"), c); r == nil {
			t.Fatal("nil reader")
		}
	}
	if ctx := With(context.Background(), nil); ctx != context.Background() {
		t.Error("With(nil) changed the context")
	}
}

func TestRecorderRejectsCountsGoingDown(t *testing.T) {
	var r Recorder
	f := r.Func()
	f(Update{Phase: "a", Done: 2})
	f(Update{Phase: "a", Done: 1})
	if _, err := r.Last(); err == nil {
		t.Error("a count going down was accepted")
	}
	r = Recorder{}
	f = r.Func()
	f(Update{Phase: "a"})
	f(Update{Phase: "b"})
	f(Update{Phase: "a"})
	if _, err := r.Last(); err == nil {
		t.Error("a phase starting again was accepted")
	}
}

func TestWithinNamesWhatThePhaseIsPartOf(t *testing.T) {
	var r Recorder
	ctx := Within(With(context.Background(), r.Func()), "b.tar")
	Phase(ctx, "replay: read records", "records", -1).Add(1)
	got, err := r.Last()
	if err != nil || len(got) != 1 || got[0].Phase != "b.tar: replay: read records" {
		t.Errorf("updates %+v (%v)", got, err)
	}
	if ctx := Within(context.Background(), "x"); Phase(ctx, "p", "records", 1) != nil {
		t.Error("Within made a Func")
	}
}
