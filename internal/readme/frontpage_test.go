package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxREADMELines bounds the front page: what it is, set-up, one block per
// role, the command table and links; the rest lives in docs/.
const maxREADMELines = 160

// TestREADMEIsAFrontPage: the README stays a front page, links to the
// performance page instead of quoting timings in its prose (a figure no test
// checks goes stale), and every relative link it gives resolves.
func TestREADMEIsAFrontPage(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if n := strings.Count(s, "\n"); n > maxREADMELines {
		t.Errorf("README.md has %d lines, more than %d: move the detail into docs/", n, maxREADMELines)
	}
	if !strings.Contains(s, "](docs/performance.md)") {
		t.Error("README.md does not link docs/performance.md")
	}
	timing := regexp.MustCompile(`\b\d+(\.\d+)? ?(s|ms|min|µs)\b`)
	code := regexp.MustCompile("`[^`]*`")
	inBlock := false
	for i, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		if m := timing.FindString(code.ReplaceAllString(l, "")); m != "" {
			t.Errorf("README.md:%d: a timing in prose (%q); put it in docs/performance.md with its date, machine and load", i+1, m)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#\s]+)[^)]*\)`).FindAllStringSubmatch(s, -1) {
		if strings.HasPrefix(m[1], "http") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
			t.Errorf("README.md links %s: %v", m[1], err)
		}
	}
}
