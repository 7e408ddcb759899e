package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
)

// validateCommandLoad holds a capture's load plan to its own command line,
// which capture writes with every flag as --name=value: --requests N plans
// N measured requests at every point, --warmup-requests W a warmup of W,
// --repeats R that many repeats, and --concurrency or --rate one point per
// listed load, in order (capture/loadspec.go). The completeness check
// counts each point's records against load.points, so a signer who deleted
// a point's rejected requests (or a whole point) and lowered the plan to
// what is left would otherwise leave a run that looks complete; one who
// also rewrites client.command_line is held only by a plan signed before
// the run (verify --plan), and the signer's statement says so. A plan file,
// sessions or a trace set the points otherwise, and are not checked here.
func validateCommandLoad(ps *problems, m *Manifest) {
	if m.Client.Name != CaptureClientName || m.Imported() {
		return
	}
	args := m.Client.CommandLine
	for _, f := range []string{"plan", "sessions", "trace"} {
		if _, ok := commandFlag(args, f); ok {
			return
		}
	}
	l := &m.Load
	if n, ok := commandInt(args, "requests"); ok && n > 0 {
		for i, p := range l.Points {
			if p.Requests != n {
				ps.add(fmt.Sprintf("load.points[%d].requests", i), "is %d, but client.command_line has --requests=%d, which capture plans at every point", p.Requests, n)
			}
		}
	}
	if n, ok := commandInt(args, "warmup-requests"); ok && l.Warmup.Requests != n {
		ps.add("load.warmup.requests", "is %d, but client.command_line has --warmup-requests=%d", l.Warmup.Requests, n)
	}
	if n, ok := commandInt(args, "repeats"); ok && l.Repeats != n {
		ps.add("load.repeats", "is %d, but client.command_line has --repeats=%d", l.Repeats, n)
	}
	if _, ok := commandFlag(args, "preset"); !ok {
		validateCommandPoints(ps, l, args)
	}
}

// validateCommandPoints checks that load.points are the loads of
// --concurrency or --rate, one each, in order.
func validateCommandPoints(ps *problems, l *Load, args []string) {
	flag := "concurrency"
	v, ok := commandFlag(args, flag)
	if !ok {
		flag = "rate"
		v, ok = commandFlag(args, flag)
	}
	if !ok {
		return
	}
	want := strings.Split(v, ",")
	if len(want) != len(l.Points) {
		ps.add("load.points", "declare %d point(s), but client.command_line's --%s=%s lists %d", len(l.Points), flag, v, len(want))
		return
	}
	for i, p := range l.Points {
		got := digits.Shortest(p.Rate)
		if flag == "concurrency" {
			got = strconv.Itoa(p.Concurrency)
		}
		w := strings.TrimSpace(want[i])
		if f, err := strconv.ParseFloat(w, 64); err == nil {
			w = digits.Shortest(f)
		}
		if got != w {
			ps.add(fmt.Sprintf("load.points[%d].%s", i, flag), "is %s, but client.command_line's --%s=%s lists %s there", got, flag, v, w)
		}
	}
}

// commandInt is an integer flag of a command line (commandFlag); ok is
// false when it is absent or not an integer.
func commandInt(args []string, name string) (int, bool) {
	v, ok := commandFlag(args, name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	return n, err == nil
}
