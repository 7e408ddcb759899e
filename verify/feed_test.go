package verify_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// readingChecker reads up to limit records (all when limit < 0) through
// the run it is given and reports whether it was handed the bundle itself
// (a second decompressing pass) and the IDs it saw.
type readingChecker struct {
	limit   int
	fail    bool
	ids     *[]string
	wasOpen *bool
}

func (c readingChecker) CheckClaims(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, error) {
	_, *c.wasOpen = run.(*artifact.Bundle)
	if c.fail {
		return nil, errors.New("checker gave up")
	}
	it, err := run.OpenRecords()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	for c.limit < 0 || len(*c.ids) < c.limit {
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		*c.ids = append(*c.ids, rec.ID)
	}
	return fakeChecker{schema.ClaimMatched}.CheckClaims(ctx, run)
}

// The claims recompute is fed the records of the content check's pass
// (each layer decompressed once), in the bundle's order, all of them; a
// recompute that stops reading early or fails never blocks the check.
func TestVerifyFeedsTheClaimsFromTheContentPass(t *testing.T) {
	o := artifacttest.RunOptions{Points: 2, Repeats: 2, Requests: 700}
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), o)
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	it, _ := b.OpenRecords()
	for {
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rec.ID)
	}
	it.Close()
	b.Close()
	if len(want) < 2000 {
		t.Fatalf("only %d records: too few to cross several batches", len(want))
	}
	for _, tc := range []struct {
		name  string
		limit int
		fail  bool
	}{{"all", -1, false}, {"stops after 3", 3, false}, {"fails before reading", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var ids []string
			var bundle bool
			v := newVerifier(t, nil, verify.WithClaimChecker(readingChecker{tc.limit, tc.fail, &ids, &bundle}))
			res, err := v.Verify(context.Background(), p, verify.Policy{AllowUnsignedUnsafe: true})
			if bundle {
				t.Fatal("the claims recompute was handed the bundle: it decompresses every records layer a second time")
			}
			if tc.fail {
				if err == nil || res.Check(verify.CheckClaims).Status != verify.StatusFailed {
					t.Fatalf("a failing recompute passed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v %+v", err, res)
			}
			n := len(want)
			if tc.limit >= 0 {
				n = tc.limit
			}
			if len(ids) != n {
				t.Fatalf("recompute saw %d records, want %d", len(ids), n)
			}
			for i := range ids {
				if ids[i] != want[i] {
					t.Fatalf("record %d: %s, want %s", i, ids[i], want[i])
				}
			}
		})
	}
}
