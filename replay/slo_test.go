package replay

import (
	"math"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestSLOJudge: one judge for every definition. A missed limit fails (and
// wins over an unmeasured one), an unmeasured limit's metric leaves the
// request unknown, a one-token answer follows the policy, limits are
// inclusive, and exact and float64 measures compare alike.
func TestSLOJudge(t *testing.T) {
	ms := func(v int64) *int64 { v *= 1e6; return &v }
	all := SLOSpec{TTFTNS: ms(100), E2ENS: ms(1000), TPOTNS: ms(10), OneToken: schema.OneTokenPass}
	failOne := all
	failOne.OneToken = schema.OneTokenFail
	e2eOnly := SLOSpec{E2ENS: ms(1000), OneToken: schema.OneTokenPass}
	good := Observed{TTFT: ExactNS(100e6, 1), E2E: ExactNS(1000e6, 1), TPOT: ExactNS(900e6, 90)}
	untimed := Observed{E2E: ExactNS(500e6, 1)}
	for _, tt := range []struct {
		name  string
		slo   SLOSpec
		o     Observed
		want  Verdict
		limit string
	}{
		{"at every limit passes", all, good, Pass, ""},
		{"tpot above by a fraction fails", all, Observed{TTFT: ExactNS(1, 1), E2E: ExactNS(1, 1), TPOT: ExactNS(900e6+1, 90)}, Fail, "tpot"},
		{"ttft above fails", all, Observed{TTFT: ExactNS(100e6+1, 1), E2E: ExactNS(1, 1), TPOT: ExactNS(1, 1)}, Fail, "ttft"},
		{"float measures compare alike", all, Observed{TTFT: FloatNS(100e6), E2E: FloatNS(1000e6), TPOT: FloatNS(10e6)}, Pass, ""},
		{"float e2e above fails", all, Observed{TTFT: FloatNS(1), E2E: FloatNS(1000e6 + 1), TPOT: FloatNS(1)}, Fail, "e2e"},
		{"unstored ttft is unknown", all, Observed{TTFT: FloatNS(math.NaN()), E2E: FloatNS(1), TPOT: FloatNS(1)}, Unknown, "ttft"},
		{"a miss wins over an unknown", all, Observed{TTFT: FloatNS(math.NaN()), E2E: FloatNS(2000e6), TPOT: FloatNS(1)}, Fail, "e2e"},
		{"one token passes under pass", all, Observed{TTFT: ExactNS(1, 1), E2E: ExactNS(1, 1), OneToken: true}, Pass, ""},
		{"one token fails under fail", failOne, Observed{TTFT: ExactNS(1, 1), E2E: ExactNS(1, 1), OneToken: true}, Fail, "tpot"},
		{"non-streaming under a TTFT limit is unknown", all, untimed, Unknown, "ttft"},
		{"non-streaming under an E2E-only SLO is judged", e2eOnly, untimed, Pass, ""},
		{"no limit passes anything", SLOSpec{}, Observed{}, Pass, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.slo.Judge(tt.o)
			if j.Verdict != tt.want || j.Limit != tt.limit {
				t.Errorf("Judge = %v (%s: %s), want %v (%s)", j.Verdict, j.Limit, j.Reason(), tt.want, tt.limit)
			}
		})
	}
}

// TestSLOJudgeSwept: a swept limit is lifted (any measured value passes
// it), an unmeasured swept metric is unknown, the other limits still
// apply, and a one-token answer's swept TPOT follows the policy.
func TestSLOJudgeSwept(t *testing.T) {
	ms := func(v int64) *int64 { v *= 1e6; return &v }
	s := SLOSpec{TTFTNS: ms(100), E2ENS: ms(1000), OneToken: schema.OneTokenFail}
	slow := Observed{TTFT: ExactNS(5000e6, 1), E2E: ExactNS(900e6, 1), TPOT: ExactNS(1, 1)}
	if j := s.judgeSwept(slow, "ttft"); j.Verdict != Pass {
		t.Errorf("swept ttft: %v %s, want pass (its limit is lifted)", j.Verdict, j.Limit)
	}
	if j := s.judgeSwept(slow, "e2e"); j.Verdict != Fail || j.Limit != "ttft" {
		t.Errorf("swept e2e: %v %s, want fail on ttft", j.Verdict, j.Limit)
	}
	if j := s.judgeSwept(Observed{E2E: ExactNS(1, 1)}, "ttft"); j.Verdict != Unknown {
		t.Errorf("swept unmeasured ttft: %v, want unknown", j.Verdict)
	}
	one := Observed{TTFT: ExactNS(1, 1), E2E: ExactNS(1, 1), OneToken: true}
	if j := s.judgeSwept(one, "tpot"); j.Verdict != Fail {
		t.Errorf("swept tpot of a one-token answer under one_token fail: %v, want fail", j.Verdict)
	}
	s.OneToken = schema.OneTokenPass
	if j := s.judgeSwept(one, "tpot"); j.Verdict != Pass {
		t.Errorf("swept tpot of a one-token answer under one_token pass: %v, want pass", j.Verdict)
	}
}

// TestSLOSpecLimitByKey: Limit reads each limit by its SLO key, nil for a
// name that is no limit; ParseSLO's keys are the table's.
func TestSLOSpecLimitByKey(t *testing.T) {
	s, err := ParseSLO(SLOExample)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]int64{"ttft": 200e6, "e2e": 5e9, "tpot": 50e6} {
		if got := s.Limit(k); got == nil || *got != want {
			t.Errorf("Limit(%q) = %v, want %d", k, got, want)
		}
	}
	if got := s.Limit("itl"); got != nil {
		t.Errorf("Limit(itl) = %d, want nil", *got)
	}
	if got := SLOPairs(map[string]string{schema.SLOTPOT: "1s", schema.SLOTTFT: "2s"}); got != "ttft=2s,tpot=1s" {
		t.Errorf("SLOPairs = %q, want table order", got)
	}
}
