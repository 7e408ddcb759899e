package pagecheck

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// browser is one headless Chromium driven over its DevTools pipe
// (--remote-debugging-pipe: commands go to the child's fd 3, answers and
// events come from its fd 4, each message JSON ending in a NUL byte), so
// no WebSocket client and no port are needed.
type browser struct {
	cmd    *exec.Cmd
	to     *os.File // our end of the child's fd 3
	from   *os.File // our end of the child's fd 4
	stderr *limitedBuffer

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
	events  map[string]chan struct{} // "session/method" → one-shot waiters
	done    chan struct{}
	readErr error
}

type reply struct {
	Result json.RawMessage
	Err    *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

type message struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    any             `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startBrowser runs chromium headless with a throw-away profile in dir.
// Every network feature Chromium would use on its own is switched off: the
// pages are local files that load nothing.
func startBrowser(ctx context.Context, chromium, dir string) (*browser, error) {
	r3, w3, err := os.Pipe() // the child reads commands from fd 3
	if err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	r4, w4, err := os.Pipe() // and writes answers to fd 4
	if err != nil {
		r3.Close()
		w3.Close()
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir="+dir, "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{r3, w4}
	b := &browser{cmd: cmd, stderr: &limitedBuffer{max: 64 << 10}, waiting: map[int]chan reply{}, events: map[string]chan struct{}{}, done: make(chan struct{})}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{r3, w3, r4, w4} {
			f.Close()
		}
		return nil, fmt.Errorf("start chromium %s: %w", chromium, err)
	}
	r3.Close()
	w4.Close()
	b.to, b.from = w3, r4
	go b.read()
	return b, nil
}

// read dispatches every message from the browser until the pipe closes.
func (b *browser) read() {
	r := bufio.NewReaderSize(b.from, 1<<20)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes(0)
		if err != nil {
			break
		}
		var m message
		if json.Unmarshal(line[:len(line)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch, ok := b.waiting[m.ID]; ok {
				delete(b.waiting, m.ID)
				ch <- reply{Result: m.Result, Err: m.Error}
			}
		} else if ch, ok := b.events[m.SessionID+"/"+m.Method]; ok {
			delete(b.events, m.SessionID+"/"+m.Method)
			close(ch)
		}
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.readErr = err
	b.mu.Unlock()
	close(b.done)
}

// expect returns a channel closed when the next event method arrives on
// session; register it before the command that causes the event.
func (b *browser) expect(session, method string) <-chan struct{} {
	ch := make(chan struct{})
	b.mu.Lock()
	b.events[session+"/"+method] = ch
	b.mu.Unlock()
	return ch
}

// call sends one command and decodes its result into out (when not nil).
func (b *browser) call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg, err := json.Marshal(message{ID: id, Method: method, SessionID: session, Params: params})
	if err != nil {
		return fmt.Errorf("chromium %s: %w", method, err)
	}
	if _, err := b.to.Write(append(msg, 0)); err != nil {
		return fmt.Errorf("chromium %s: %w (stderr: %s)", method, err, b.stderr)
	}
	select {
	case r := <-ch:
		if r.Err != nil {
			return fmt.Errorf("chromium %s: %s (code %d)", method, r.Err.Message, r.Err.Code)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				return fmt.Errorf("chromium %s: decode result: %w", method, err)
			}
		}
		return nil
	case <-b.done:
		return fmt.Errorf("chromium %s: browser closed the pipe: %w (stderr: %s)", method, b.readErr, b.stderr)
	case <-ctx.Done():
		return fmt.Errorf("chromium %s: %w", method, ctx.Err())
	}
}

// wait blocks until ch is closed, the browser exits or ctx ends.
func (b *browser) wait(ctx context.Context, ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-b.done:
		return fmt.Errorf("chromium: browser closed the pipe waiting for %s (stderr: %s)", what, b.stderr)
	case <-ctx.Done():
		return fmt.Errorf("chromium: waiting for %s: %w", what, ctx.Err())
	}
}

// close asks the browser to quit and waits for it.
func (b *browser) close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Browser.close has no answer worth waiting for
	_ = b.call(ctx, "", "Browser.close", nil, nil)
	b.to.Close()
	<-b.done
	b.from.Close()
	return b.cmd.Wait()
}

// limitedBuffer keeps the first max bytes written to it (Chromium's
// stderr, for error messages).
type limitedBuffer struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

var _ io.Writer = (*limitedBuffer)(nil)
