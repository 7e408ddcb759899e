package merge

import "testing"

func TestIndexRanges(t *testing.T) {
	for _, c := range []struct {
		idx  []int
		want string
	}{
		{[]int{5}, "5"},
		{[]int{0, 1, 2, 4, 6, 7}, "0-2, 4, 6-7"},
		{[]int{0, 2, 4, 6, 8}, "0, 2, 4, and 2 more ranges"},
	} {
		if got := indexRanges(c.idx, 3); got != c.want {
			t.Errorf("indexRanges(%v, 3) = %q, want %q", c.idx, got, c.want)
		}
	}
}
