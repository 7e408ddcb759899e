package schema_test

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestCaptureLoadFollowsTheCommandLine: a capture's load plan is the one
// its command line asked for; a point whose planned requests were lowered
// (its rejected requests deleted with it), a point dropped, a load
// changed, fewer repeats or warmup requests contradict it. A plan file,
// sessions, a preset's extra points and an imported run are not checked.
func TestCaptureLoadFollowsTheCommandLine(t *testing.T) {
	args := []string{"benchseal", "capture", "--concurrency=1,4,16", "--repeats=2", "--requests=24", "--warmup-requests=4"}
	points := func(reqs ...int) []schema.Point {
		var out []schema.Point
		for i, c := range []int{1, 4, 16}[:len(reqs)] {
			out = append(out, schema.Point{Name: "c" + []string{"1", "4", "16"}[i], Concurrency: c, Requests: reqs[i]})
		}
		return out
	}
	with := func(extra ...string) []string { return append(append([]string{}, args...), extra...) }
	for _, tc := range []struct {
		name     string
		args     []string
		points   []schema.Point
		repeats  int
		warmup   int
		imported bool
		want     []string // "field: message part"
	}{
		{name: "as asked", args: args, points: points(24, 24, 24), repeats: 2, warmup: 4},
		{name: "requests lowered", args: args, points: points(24, 24, 15), repeats: 2, warmup: 4,
			want: []string{"load.points[2].requests: is 15, but client.command_line has --requests=24"}},
		{name: "point dropped", args: args, points: points(24, 24), repeats: 2, warmup: 4,
			want: []string{"load.points: declare 2 point(s), but client.command_line's --concurrency=1,4,16 lists 3"}},
		{name: "load changed", args: args, points: []schema.Point{{Name: "c1", Concurrency: 1, Requests: 24}, {Name: "c4", Concurrency: 4, Requests: 24}, {Name: "c8", Concurrency: 8, Requests: 24}}, repeats: 2, warmup: 4,
			want: []string{"load.points[2].concurrency: is 8, but client.command_line's --concurrency=1,4,16 lists 16"}},
		{name: "repeats and warmup lowered", args: args, points: points(24, 24, 24), repeats: 1, warmup: 0,
			want: []string{"load.warmup.requests: is 0, but client.command_line has --warmup-requests=4", "load.repeats: is 1, but client.command_line has --repeats=2"}},
		{name: "rates", args: []string{"benchseal", "capture", "--rate=0.5,2", "--requests=10"}, points: []schema.Point{{Name: "r0.5", Rate: 0.5, Requests: 10}, {Name: "r2", Rate: 2, Requests: 10}}, repeats: 1},
		{name: "rate changed", args: []string{"benchseal", "capture", "--rate=0.5,2", "--requests=10"}, points: []schema.Point{{Name: "r0.5", Rate: 0.5, Requests: 10}, {Name: "r2", Rate: 3, Requests: 10}}, repeats: 1,
			want: []string{"load.points[1].rate: is 3, but client.command_line's --rate=0.5,2 lists 2"}},
		{name: "preset: points not counted", args: with("--preset=protocol"), points: points(24), repeats: 2, warmup: 4},
		{name: "plan file", args: []string{"benchseal", "capture", "--plan=plan.json"}, points: points(3, 4), repeats: 1},
		{name: "imported", args: args, points: points(24, 15), repeats: 2, warmup: 4, imported: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &schema.Manifest{Client: schema.Client{Name: schema.CaptureClientName, CommandLine: tc.args},
				Load: schema.Load{Mode: schema.ModeConcurrency, Points: tc.points, Repeats: tc.repeats, Warmup: schema.Warmup{Requests: tc.warmup}}}
			if tc.imported {
				m.Source = &schema.Source{Tool: "vllm"}
			}
			var got []string
			for _, p := range schema.ValidateManifest(m, "manifest.json") {
				if strings.Contains(p.Message, "client.command_line") && strings.HasPrefix(p.Field, "load.") {
					got = append(got, p.Field+": "+p.Message)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %q, want %q", got[i], w)
				}
			}
		})
	}
}
