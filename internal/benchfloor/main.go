// Command benchfloor is the Go reader floor that scripts/bench.d/goals.sh
// (make bench) prints beside the standard-tool floors: it decompresses
// zstd records files with the decoder benchseal uses (klauspost/compress,
// one goroutine, as the records reader runs it) and scans every decimal
// integer in them with a digit loop. That is the least any reader of the
// JSON-text records must do to learn their numbers: no field names, no
// checks, no strings, nothing kept per record. It prints how many integers
// it read and their sum (wrapping), so the scan cannot be optimized away.
// It is not part of the benchseal CLI.
//
//	benchfloor FILE.jsonl.zst ...
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchfloor FILE.jsonl.zst ...")
		os.Exit(2)
	}
	var total scan
	for _, name := range os.Args[1:] {
		if err := scanFile(name, &total); err != nil {
			fmt.Fprintf(os.Stderr, "benchfloor: %s: %v\n", name, err)
			os.Exit(1)
		}
	}
	fmt.Printf("%d integers, sum %d\n", total.n, total.sum)
}

// scan is the state of the digit loop; an integer may straddle two reads.
type scan struct {
	n, sum, v uint64
	in        bool
}

// feed scans p, continuing an integer the previous call left open.
func (s *scan) feed(p []byte) {
	for _, c := range p {
		if d := c - '0'; d < 10 {
			s.v = s.v*10 + uint64(d)
			s.in = true
		} else if s.in {
			s.end()
		}
	}
}

// end counts the integer being read.
func (s *scan) end() {
	s.n++
	s.sum += s.v
	s.v, s.in = 0, false
}

func scanFile(name string, s *scan) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := scanReader(d, s); err != nil {
		return err
	}
	if s.in {
		s.end()
	}
	return nil
}

// scanReader feeds r to s in 1 MiB reads.
func scanReader(r io.Reader, s *scan) error {
	buf := make([]byte, 1<<20)
	for {
		k, err := r.Read(buf)
		s.feed(buf[:k])
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
