package merge

import (
	"bufio"
	"container/heap"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// head is the next record of one shard's stream with its run-order key.
type head struct {
	rec   *schema.Record
	shard int
	key   [2]int64 // phase in run order, request number
}

type heads []*head

func (h heads) Len() int { return len(h) }
func (h heads) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key[0] < h[j].key[0] || (h[i].key[0] == h[j].key[0] && h[i].key[1] < h[j].key[1])
	}
	return h[i].shard < h[j].shard
}
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)   { *h = append(*h, x.(*head)) }
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// writeRecords writes the shards' records to path in run order (phase by
// phase as capture runs them, request numbers ascending), each moved onto
// the merged timeline by its shard's offset, and returns the count per
// shard.
func writeRecords(ctx context.Context, path string, byIndex []*shardRun, m *schema.Manifest) ([]int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("merge: write records: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	points := map[string]int{}
	for i, p := range m.Load.Points {
		points[p.Name] = i
	}
	order := func(rec *schema.Record) [2]int64 {
		ph := int64(1)
		if rec.Phase == schema.PhaseWarmup {
			ph = 0
		}
		k := int64(0)
		if i := strings.LastIndexByte(rec.ID, '.'); i >= 0 && i+2 <= len(rec.ID) {
			k, _ = strconv.ParseInt(rec.ID[i+2:], 10, 64)
		}
		return [2]int64{(int64(rec.Repeat)*int64(len(m.Load.Points))+int64(points[rec.Point]))*2 + ph, k}
	}
	counts := make([]int64, len(byIndex))
	var readers []*schema.RecordReader
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	h := &heads{}
	next := func(hd *head, rr *schema.RecordReader) error {
		rec, err := rr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return errcond.Errorf(ErrMerge, "merge refused: shard run %s: %w", byIndex[hd.shard].dir, err)
		}
		hd.rec, hd.key = rec, order(rec)
		heap.Push(h, hd)
		return nil
	}
	rrs := make([]*schema.RecordReader, len(byIndex))
	for i, sr := range byIndex {
		if sr == nil {
			continue
		}
		rr, err := sr.rd.OpenRecordReader()
		if err != nil {
			return nil, errcond.Errorf(ErrMerge, "merge refused: shard run %s: %w", sr.dir, err)
		}
		readers = append(readers, rr)
		rrs[i] = rr
		if err := next(&head{shard: i}, rr); err != nil {
			return nil, err
		}
	}
	var buf []byte
	for h.Len() > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		hd := heap.Pop(h).(*head)
		rec, i := hd.rec, hd.shard
		off := m.Shards.Members[i].OffsetNS
		if rec.ScheduledNS != nil {
			v := *rec.ScheduledNS + off
			rec.ScheduledNS = &v
		}
		rec.SentNS += off
		rec.EndNS += off
		s := int64(i)
		rec.Shard = &s
		buf, err = schema.AppendRecord(buf[:0], rec)
		if err != nil {
			return nil, fmt.Errorf("merge: write records: %w", err)
		}
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return nil, fmt.Errorf("merge: write records: %w", err)
		}
		counts[i]++
		if err := next(&head{shard: i}, rrs[i]); err != nil {
			return nil, err
		}
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("merge: write records: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("merge: write records: %w", err)
	}
	return counts, nil
}
