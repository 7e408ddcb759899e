package schema

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestEachJSONLine(t *testing.T) {
	stop := errors.New("stop")
	for _, c := range []struct {
		name, in string
		max      int
		stopAt   int
		want     string
	}{
		{"blank lines skipped, numbers kept", "{\"a\":1}\n\n  \n {\"b\":2} \n", 1 << 10, 0, "1:{\"a\":1} 4:{\"b\":2} <nil>"},
		{"fn's error stops the reading", "1\n2\n3\n", 1 << 10, 2, "1:1 2:2 stop"},
		{"a line over the limit names its number", "1\n" + strings.Repeat("x", 70<<10) + "\n3\n", 64 << 10, 0, "1:1 scan line 2: bufio.Scanner: token too long"},
	} {
		var got []string
		err := EachJSONLine(strings.NewReader(c.in), c.max, func(line int, b []byte) error {
			got = append(got, fmt.Sprintf("%d:%s", line, b))
			if line == c.stopAt {
				return stop
			}
			return nil
		}, func(line int, err error) error { return fmt.Errorf("scan line %d: %w", line, err) })
		if s := strings.Join(append(got, fmt.Sprint(err)), " "); s != c.want {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
	}
}
