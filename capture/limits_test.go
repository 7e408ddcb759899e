package capture_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
)

// lateBody stands for a starved client: the whole stream, [DONE]
// included, is delivered by one read that returns only after delay and
// ignores the request's cancellation, as a reader goroutine that runs
// late (after the timer goroutine fired) would see it.
type lateBody struct {
	delay time.Duration
	r     io.Reader
	slept bool
}

func (b *lateBody) Read(p []byte) (int, error) {
	if !b.slept {
		time.Sleep(b.delay)
		b.slept = true
	}
	return b.r.Read(p)
}

func (b *lateBody) Close() error { return nil }

type lateTransport struct{ delay time.Duration }

func (lt lateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	var s strings.Builder
	for range 8 {
		s.WriteString(`data: {"choices":[{"delta":{"content":"x"}}]}` + "\n\n")
	}
	s.WriteString(`data: {"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":32,"completion_tokens":8}}` + "\n\ndata: [DONE]\n\n")
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    &lateBody{delay: lt.delay, r: strings.NewReader(s.String())},
		Request: req,
	}, nil
}

// TestLateReadPastLimitGetsTheLimitsStatus checks that a response read
// only after the timeout or the planned cancellation (the reader ran late
// and won the race against the cancellation) is recorded as timeout or
// cancelled, with no chunk after the limit, and never as ok.
func TestLateReadPastLimitGetsTheLimitsStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		cancel  *capture.Cancel
		status  string
		limit   time.Duration
	}{
		{"timeout", 40 * time.Millisecond, nil, schema.StatusTimeout, 40 * time.Millisecond},
		{"planned cancellation", 0, &capture.Cancel{Fraction: 1, After: schema.Duration(20 * time.Millisecond)}, schema.StatusCancelled, 20 * time.Millisecond},
		{"cancellation before timeout", 60 * time.Millisecond, &capture.Cancel{Fraction: 1, After: schema.Duration(20 * time.Millisecond)}, schema.StatusCancelled, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(t, "http://127.0.0.1:1")
			o.SkipPreflight = true
			o.HTTPClient = &http.Client{Transport: lateTransport{delay: 100 * time.Millisecond}}
			o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 4}}
			o.Plan.RequestTimeout = schema.Duration(tc.timeout)
			o.Plan.Cancel = tc.cancel
			if _, err := capture.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			rf := readRun(t, o.OutDir)
			if c := countStatus(rf.recs, ""); c[tc.status] != 4 {
				t.Fatalf("statuses %v, want %d × %s", c, 4, tc.status)
			}
			for _, r := range rf.recs {
				if d := time.Duration(r.EndNS - r.SentNS); d < tc.limit {
					t.Errorf("%s: %s after %v, before the %v limit", r.ID, r.Status, d, tc.limit)
				}
				for _, c := range r.ChunksNS {
					if time.Duration(c) > tc.limit {
						t.Errorf("%s: chunk at %v kept, after the %v limit", r.ID, time.Duration(c), tc.limit)
					}
				}
				if r.OutputTokens != int64(len(r.ChunksNS)) {
					t.Errorf("%s: output_tokens %d, chunks %d", r.ID, r.OutputTokens, len(r.ChunksNS))
				}
			}
			if err := schema.ValidateRunDocuments(o.OutDir, 20); err != nil {
				t.Errorf("validate: %v", err)
			}
		})
	}
}
