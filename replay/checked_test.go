package replay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// TestReplayCheckedRunDir: replay of a schema.CheckedRunDir gives the
// run directory's result for a valid run, and for a run validate rejects
// (a measured request ending before it was sent, which the engine itself
// would take) no result but validate's problem, naming file, line and
// field, under schema.ErrInvalid.
func TestReplayCheckedRunDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	o := synth.DefaultOptions()
	o.Requests, o.Points, o.Repeats, o.Warmup = 8, []float64{1, 2}, 2, 1
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	plain, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Replay(context.Background(), plain, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checked, err := schema.OpenCheckedRunDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Replay(context.Background(), checked, Options{})
	if err != nil {
		t.Fatalf("valid run: %v", err)
	}
	if !reflect.DeepEqual(got.Results, want.Results) {
		t.Error("valid run: the checked replay's results differ from the run directory's")
	}

	p := filepath.Join(dir, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	lines[1] = regexp.MustCompile(`"end_ns":\d+`).ReplaceAllString(lines[1], `"end_ns":-5`)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, err = schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Replay(context.Background(), plain, Options{}); err != nil {
		t.Fatalf("the engine refuses the edited record itself (%v): the test no longer shows the checked stream's part", err)
	}
	checked, err = schema.OpenCheckedRunDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Replay(context.Background(), checked, Options{})
	wantMsg := p + `:2: field "end_ns": -5 is before sent_ns`
	if res != nil || !errors.Is(err, schema.ErrInvalid) || err == nil || !strings.Contains(err.Error(), wantMsg) {
		t.Fatalf("invalid run: result %v, error %v; want none, and an error under schema.ErrInvalid holding %q", res != nil, err, wantMsg)
	}
}
