package digits

import (
	"math"
	"math/big"
	"testing"
)

func TestMillisecondsRoundsHalfToEven(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{370050500, "370.050"}, // a tie: the even neighbour
		{370051500, "370.052"},
		{370050501, "370.051"},
		{2500, "0.002"},
		{3500, "0.004"},
		{-2500, "-0.002"},
		{0, "0.000"},
		{999, "0.001"},
	} {
		if got := Milliseconds(c.ns); got != c.want {
			t.Errorf("Milliseconds(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestFloatAndRat(t *testing.T) {
	if got := Float(135.6805, 3); got != "135.680" && got != "135.681" {
		t.Errorf("Float(135.6805, 3) = %q", got)
	}
	if got := Float(0.0625, 3); got != "0.062" { // exact binary tie
		t.Errorf("Float(0.0625, 3) = %q, want 0.062", got)
	}
	if got := Float(math.NaN(), 3); got != "-" {
		t.Errorf("Float(NaN) = %q, want -", got)
	}
	if got := Rat(big.NewRat(-5, 2), 0); got != "-2" {
		t.Errorf("Rat(-5/2, 0) = %q, want -2", got)
	}
	if got := PValue(0.0079365); got != "0.00794" {
		t.Errorf("PValue = %q, want 0.00794", got)
	}
}

// TestCount: the noun follows the count.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 shards"}, {1, "1 shard"}, {2, "2 shards"}} {
		if got := Count(c.n, "shard", "shards"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
