package replay

import (
	"math"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

func sessionRec(session, turn, input int64, status string) *schema.Record {
	return &schema.Record{Phase: schema.PhaseMeasure, Session: &session, Turn: &turn, InputTokens: input, Status: status}
}

// A later turn expects its previous turn's prompt cached; turn 0, a turn
// after a failed turn and a turn whose predecessor is missing expect none.
func TestSessionTurnExpectsThePreviousPrompt(t *testing.T) {
	var g sessionGroup
	var p PrefixExpected
	for _, rec := range []*schema.Record{
		sessionRec(0, 0, 10, schema.StatusOK),
		sessionRec(1, 0, 7, schema.StatusError),
		sessionRec(0, 1, 25, schema.StatusOK),
		sessionRec(1, 1, 20, schema.StatusOK), // after a failed turn
		sessionRec(0, 3, 60, schema.StatusOK), // turn 2 missing
		sessionRec(0, 4, 80, schema.StatusOK),
	} {
		p.addTurn(rec, g.previous(rec), true)
	}
	if p.Basis != PrefixBasisSessions || p.Requests != 2 || p.PromptTokens != 25+80 || p.ExpectedTokens != 10+60 || p.Overflow != "" {
		t.Fatalf("got %+v; want 2 turns, prompt 105, expected 70", p)
	}
	var q PrefixExpected
	g = sessionGroup{}
	for _, rec := range []*schema.Record{sessionRec(0, 0, 10, schema.StatusOK), sessionRec(0, 1, 25, schema.StatusOK)} {
		q.addTurn(rec, g.previous(rec), false)
	}
	if q.Requests != 0 {
		t.Fatalf("input_tokens not measured, yet %d turns counted", q.Requests)
	}
}

// Hostile input_tokens whose sum exceeds int64 make the sums null with a
// reason, never a wrapped number.
func TestPrefixSumsOverflowToNull(t *testing.T) {
	var g sessionGroup
	var p PrefixExpected
	for _, rec := range []*schema.Record{
		sessionRec(0, 0, math.MaxInt64, schema.StatusOK),
		sessionRec(0, 1, math.MaxInt64, schema.StatusOK),
		sessionRec(0, 2, 5, schema.StatusOK),
	} {
		p.addTurn(rec, g.previous(rec), true)
	}
	if p.Overflow != ReasonPrefixOverflow {
		t.Fatalf("got %+v; want the overflow reason", p)
	}
	if p.PromptTokens < 0 || p.ExpectedTokens < 0 {
		t.Fatalf("a sum wrapped: %+v", p)
	}
}
