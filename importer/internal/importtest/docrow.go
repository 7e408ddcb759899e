package importtest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// DocsFile is the document holding the external-check table.
const DocsFile = "docs/importers.md"

// docsSection heads the table in DocsFile.
const docsSection = "## External check (real fixtures)"

// DocRow is one row of the external-check table: the fixture cell (its
// key), and the leading whole number of the matched, mismatched and not
// recomputable cells (Numeric false when the row states no counts).
type DocRow struct {
	Fixture                           string
	Matched, Mismatched, NotRecompute int
	Numeric                           bool
}

// DocRows reads the external-check table of DocsFile.
func DocRows(tb testing.TB) []DocRow {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), DocsFile))
	if err != nil {
		tb.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), docsSection+"\n")
	if !ok {
		tb.Fatalf("%s: no section %q", DocsFile, docsSection)
	}
	var rows []DocRow
	inTable := false
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) < 6 || cells[0] == "fixture" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		r := DocRow{Fixture: cells[0]}
		var oks [3]bool
		r.Matched, oks[0] = leadingInt(cells[3])
		r.Mismatched, oks[1] = leadingInt(cells[4])
		r.NotRecompute, oks[2] = leadingInt(cells[5])
		r.Numeric = oks[0] && oks[1] && oks[2]
		rows = append(rows, r)
	}
	return rows
}

func leadingInt(s string) (int, bool) {
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s[:j])
	return n, err == nil
}

// WantDocRow fails the test unless DocsFile's external-check table has a
// row for fixture stating the outcome counts checks actually give, so
// that the table cannot drift from what the importers do.
func WantDocRow(t *testing.T, fixture string, checks []schema.ClaimCheck) {
	t.Helper()
	n := map[string]int{}
	for _, c := range checks {
		n[c.Outcome]++
	}
	for _, r := range DocRows(t) {
		if r.Fixture != fixture {
			continue
		}
		if !r.Numeric {
			t.Fatalf("%s: row %q states no counts", DocsFile, fixture)
		}
		if r.Matched != n[schema.ClaimMatched] || r.Mismatched != n[schema.ClaimMismatched] || r.NotRecompute != n[schema.ClaimNotRecomputable] {
			t.Errorf("%s: row %q says %d matched, %d mismatched, %d not recomputable; the import gives %d, %d, %d",
				DocsFile, fixture, r.Matched, r.Mismatched, r.NotRecompute, n[schema.ClaimMatched], n[schema.ClaimMismatched], n[schema.ClaimNotRecomputable])
		}
		return
	}
	t.Errorf("%s: the external-check table has no row %q", DocsFile, fixture)
}
