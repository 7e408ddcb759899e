package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ErrPreflight is the root of the errors Run returns when the endpoint
// fails the checks made before the run: it does not answer, does not serve
// the model, or fails the probe request. Nothing is written then.
var ErrPreflight = errors.New("preflight failed")

// preflightTimeout bounds the model listing and probeTimeout the probe
// request, whose answer is cut to schema.ProbeOutputTokens: the probe asks
// whether the endpoint works, not how fast.
const (
	preflightTimeout = 10 * time.Second
	probeTimeout     = 2 * time.Minute
)

// preflight checks, before anything is written, that the endpoint serves
// the model (GET /v1/models, when the server offers it) and answers one
// probe request built like the run's first one with content. A vLLM-style
// client does the same: a run against a dead port or a wrong model name
// would otherwise record nothing but failures.
func (r *runner) preflight(ctx context.Context, base string) error {
	if err := r.checkModels(ctx, base); err != nil {
		return err
	}
	return r.probeRequest(ctx)
}

// checkModels asks GET /v1/models. A server that does not offer it (404,
// 405, or an answer that is not a model list) is not an error; an
// unreachable one, a refusal or a list without the model is.
func (r *runner) checkModels(ctx context.Context, base string) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	if err != nil {
		return errcond.Errorf(ErrPreflight, "preflight failed: %w", err)
	}
	if r.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.o.APIKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return errcond.Errorf(ErrPreflight, "preflight failed: endpoint %s does not answer: %w", base, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return errcond.Errorf(ErrPreflight, "preflight failed: GET %s/v1/models: HTTP %s: %s (is the API key right? see --api-key-env)", base, resp.Status, serverMessage(body))
	case resp.StatusCode != http.StatusOK:
		return errcond.Errorf(ErrPreflight, "preflight failed: GET %s/v1/models: HTTP %s: %s", base, resp.Status, serverMessage(body))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil || len(list.Data) == 0 {
		return nil // not an OpenAI model list: the probe request decides
	}
	var served []string
	for _, d := range list.Data {
		if d.ID == r.o.Request.Model {
			return nil
		}
		served = append(served, d.ID)
	}
	slices.Sort(served)
	if len(served) > 20 {
		served = append(served[:20], fmt.Sprintf("… %d more", len(list.Data)-20))
	}
	return errcond.Errorf(ErrPreflight, "preflight failed: model %q is not served by %s; it serves: %s (set --model to one of them)", r.o.Request.Model, base, strings.Join(served, ", "))
}

// probeRequest sends the first workload item, as the run will send it but
// with at most schema.ProbeOutputTokens of output, and requires a successful
// answer with content.
func (r *runner) probeRequest(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	it := r.items[0]
	if r.probe != nil {
		it = *r.probe
	}
	it.OutputTokens = min(max(it.OutputTokens, 1), schema.ProbeOutputTokens)
	body, err := RequestBody(r.o.Request, &it)
	if err != nil {
		return errcond.Errorf(ErrPreflight, "preflight failed: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return errcond.Errorf(ErrPreflight, "preflight failed: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.o.Request.Stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if r.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.o.APIKey)
	}
	fail := func(format string, args ...any) error {
		return errcond.Errorf(ErrPreflight, "preflight failed: probe request POST %s: %s", r.url, fmt.Sprintf(format, args...))
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fail("%v", unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fail("HTTP %s: %s", resp.Status, serverMessage(b))
	}
	if !r.o.Request.Stream {
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxEventSize))
		if err != nil {
			return fail("reading the response: %v", err)
		}
		r.fingerprint = fingerprint([][]byte{b})
		ch := ParseChunk(&Event{Data: b})
		switch {
		case ch.Err != "":
			return fail("error in the response: %s", ch.Err)
		case !ch.Content:
			return fail("the response has no content")
		}
		return nil
	}
	// The first bytes of the stream are kept for the engine's
	// system_fingerprint (detection evidence, read apart from the
	// stream's parse).
	head := &headBuffer{max: fingerprintBytes}
	res := ReadStream(NewSSEReader(io.TeeReader(resp.Body, head), nil), 16)
	var datas [][]byte
	for _, l := range bytes.Split(head.b, []byte("\n")) {
		if d, ok := bytes.CutPrefix(bytes.TrimSpace(l), []byte("data:")); ok {
			datas = append(datas, bytes.TrimSpace(d))
		}
	}
	r.fingerprint = fingerprint(datas)
	switch {
	case res.Err != "":
		return fail("error in the stream: %s", res.Err)
	case res.ReadErr != nil:
		return fail("reading the stream: %v", res.ReadErr)
	case len(res.Chunks) == 0:
		return fail("the stream carried no content (is it an OpenAI-compatible streaming endpoint?)")
	}
	return nil
}

// serverMessage is the message of an OpenAI-style error body
// ({"error": {"message": …}} or {"message": …}), else the body itself,
// trimmed and shortened.
func serverMessage(b []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			return truncate(inner.Message, 300)
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return truncate(s, 300)
		case e.Message != "":
			return truncate(e.Message, 300)
		case e.Detail != "":
			return truncate(e.Detail, 300)
		}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "(empty body)"
	}
	return truncate(s, 300)
}

// unwrapURLError drops net/http's "Post \"url\": " prefix, which the
// callers' messages already say.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ServerFingerprint is the key of manifest.engine.server that holds the
// system_fingerprint of the preflight probe's answer: what the engine says
// its build is, detection evidence beside /v1/models and /props.
const ServerFingerprint = "system_fingerprint"

// fingerprintBytes bounds the probe's answer kept for its
// system_fingerprint.
const fingerprintBytes = 64 << 10

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	b   []byte
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if n := h.max - len(h.b); n > 0 {
		h.b = append(h.b, p[:min(n, len(p))]...)
	}
	return len(p), nil
}

// fingerprint is the system_fingerprint the first of the answer's JSON
// objects that carries one states (OpenAI's field; llama.cpp sends its
// build, "b<build>-<commit>", in every chunk), "" when none does. At most
// 200 bytes are kept.
func fingerprint(datas [][]byte) string {
	for _, d := range datas {
		var c struct {
			SystemFingerprint string `json:"system_fingerprint"`
		}
		if json.Unmarshal(d, &c) == nil && c.SystemFingerprint != "" {
			return truncate(c.SystemFingerprint, 200)
		}
	}
	return ""
}
