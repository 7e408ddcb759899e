// The unit of the records' input_tokens: the server's count of the prompt,
// whether or not the request that sent it was counted.

package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/benchseal/benchseal/schema"
)

// promptCounts holds the server's count of each workload item's prompt
// tokens, as far as this run learned it, and the records written without
// one. The server's tokenizer is deterministic for one prompt text sent
// through one API and chat template (every item's body is built once and
// sent as is), so its count for an item in one answer is its count for
// every request of that item, also one it answered with an error or never
// answered.
type promptCounts struct {
	// fitted: the items' input_tokens are already the server's counts
	// (fitPrompts counted each with its tokenizer endpoint).
	fitted bool
	// byItem is the prompt_tokens of an answer to the item, 0: none yet.
	byItem []atomic.Int64
	mu     sync.Mutex
	// pending maps the id of each record written without the server's
	// count to its item.
	pending map[string]int
	// pendingOK counts those of pending that ended ok (their usage was
	// missing): they hold the prompt's word count, the others 0.
	pendingOK map[string]bool
}

func newPromptCounts(items int) *promptCounts {
	return &promptCounts{byItem: make([]atomic.Int64, items), pending: map[string]int{}, pendingOK: map[string]bool{}}
}

// learn sets rec's input_tokens to the server's usage.prompt_tokens when
// the answer has one, and remembers it as the count of rec's item.
func (p *promptCounts) learn(rec *schema.Record, usage *Usage) {
	if usage != nil && usage.PromptTokens > 0 {
		rec.InputTokens = usage.PromptTokens
		p.byItem[*rec.Item].Store(usage.PromptTokens)
	}
}

// settle gives rec, once its status is final, the input_tokens learn did
// not: the server's count of the same prompt (fitted, or from another
// answer so far); else, for now, 0 for a request that did not end ok
// (uncounted; no metric reads a failed request's input_tokens) and the
// prompt's words for an ok answer without usage, with the record
// remembered so that resolve can give it a count learned later.
func (p *promptCounts) settle(rec *schema.Record, it *Item) {
	if rec.InputTokens > 0 {
		return
	}
	idx := int(*rec.Item)
	if p.fitted && it.InputTokens > 0 {
		rec.InputTokens = int64(it.InputTokens)
		return
	}
	if n := p.byItem[idx].Load(); n > 0 {
		rec.InputTokens = n
		return
	}
	ok := rec.Status == schema.StatusOK
	if ok {
		rec.InputTokens = int64(approxTokens(it))
	}
	p.mu.Lock()
	p.pending[rec.ID] = idx
	if ok {
		p.pendingOK[rec.ID] = true
	}
	p.mu.Unlock()
}

// resolve gives every pending record of the records file at path whose
// item the server counted later in the run that count, rewriting the file
// (a staging file beside it, synced, then renamed over it: a crash leaves
// the old file or the new one). It reads and writes each line once, and
// not at all when no pending record can be resolved. It returns how many
// records are still uncounted: failed ones (input_tokens 0) and ok ones
// (input_tokens the prompt's words).
func (p *promptCounts) resolve(path string) (failed, ok int, err error) {
	fix := map[string]int64{}
	var fixedOK int
	for id, idx := range p.pending {
		if p.pendingOK[id] {
			ok++
		} else {
			failed++
		}
		if n := p.byItem[idx].Load(); n > 0 {
			fix[id] = n
			if p.pendingOK[id] {
				fixedOK++
			}
		}
	}
	if len(fix) == 0 {
		return failed, ok, nil
	}
	if err := rewriteInputTokens(path, fix); err != nil {
		return failed, ok, err
	}
	return failed - (len(fix) - fixedOK), ok - fixedOK, nil
}

// rewriteInputTokens replaces the input_tokens of the records whose ids
// fix names; every other line is copied byte for byte.
func rewriteInputTokens(path string, fix map[string]int64) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("count input tokens: %w", err)
	}
	defer in.Close()
	schema.ReclaimStale(path) // best effort, as WriteFileAtomic
	out, st, err := schema.NewStagingFile(path, 0o644)
	if err != nil {
		return fmt.Errorf("count input tokens: write %s: %w", path, err)
	}
	defer st.Release()
	fail := func(err error) error {
		out.Close()
		os.Remove(out.Name())
		return fmt.Errorf("count input tokens: write %s: %w", path, err)
	}
	br := bufio.NewReaderSize(in, 1<<20)
	bw := bufio.NewWriterSize(out, 1<<20)
	var buf []byte
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 {
			rec, derr := schema.DecodeRecord(bytes.TrimSuffix(line, []byte("\n")))
			if derr != nil {
				return fail(fmt.Errorf("line %d: %w", n, derr))
			}
			if v, ok := fix[rec.ID]; ok {
				rec.InputTokens = v
				if buf, err = schema.AppendRecord(buf[:0], rec); err != nil {
					return fail(fmt.Errorf("line %d: %w", n, err))
				}
				line = append(buf, '\n')
			}
			if _, err := bw.Write(line); err != nil {
				return fail(err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fail(rerr)
		}
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := out.Sync(); err != nil {
		return fail(err)
	}
	if err := out.Close(); err != nil {
		os.Remove(out.Name())
		return fmt.Errorf("count input tokens: write %s: %w", path, err)
	}
	if err := os.Rename(out.Name(), path); err != nil {
		os.Remove(out.Name())
		return fmt.Errorf("count input tokens: write %s: %w", path, err)
	}
	schema.SyncDir(filepath.Dir(path))
	return nil
}

// NoteUncountedInput is schema.NoteUncountedInput, for callers of capture.
const NoteUncountedInput = schema.NoteUncountedInput

// noteRecords completes the NoteInputTokens note with the unit of the
// records' input_tokens, and writes NoteUncountedInput, after resolve
// (err: its rewrite failed, and the records file is as written). The
// NoteInputTokens text states the rule only, so the shards of one
// capture agree on it.
func (p *promptCounts) noteRecords(m *schema.Manifest, failed, ok int, err error) {
	if p.fitted {
		return
	}
	s := "every record's input_tokens is the server's count of its prompt: its answer's usage.prompt_tokens or, for a request the server did not count (no usage), the usage.prompt_tokens of another answer of this run to the same prompt; " +
		"where no answer counted the prompt, a record that did not end ok has input_tokens 0, uncounted (no metric or check reads the input_tokens of a request that did not end ok), " +
		"and an ok one whose answer carried no usage the prompt's whitespace-separated words, an estimate; notes." + NoteUncountedInput + " counts both"
	if prev := m.Notes[NoteInputTokens]; prev != "" {
		s = prev + "; " + s
	}
	setNote(m, NoteInputTokens, s)
	var u []string
	if failed > 0 {
		u = append(u, fmt.Sprintf("%d record(s) that did not end ok have input_tokens 0: uncounted, no answer of this run counted their prompt", failed))
	}
	if ok > 0 {
		u = append(u, fmt.Sprintf("%d ok record(s) whose answer carried no usage have the prompt's words as input_tokens: no answer of this run counted their prompt", ok))
	}
	if err != nil {
		u = append(u, fmt.Sprintf("giving records the count an answer gave after them failed, the records are as written: %v", err))
	}
	if len(u) > 0 {
		setNote(m, NoteUncountedInput, strings.Join(u, "; "))
	}
}
