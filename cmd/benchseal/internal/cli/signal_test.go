package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// endlessRun writes a run directory whose records.jsonl is a FIFO fed
// valid records until the test ends: a command reading it never finishes
// on its own. The channel is closed once the command has opened the FIFO
// (so it is running and reading, its signal handlers installed).
func endlessRun(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	o := synth.DefaultOptions()
	o.Requests, o.Points, o.Repeats, o.Warmup, o.WorkloadItems = 8, []float64{1}, 1, 0, 5
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	rp := filepath.Join(dir, schema.RecordsFile)
	lines, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(rp)
	if err := syscall.Mkfifo(rp, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	stop, opened := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() {
		// Opening a FIFO for writing blocks until a reader opens it.
		f, err := os.OpenFile(rp, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		close(opened)
		defer f.Close()
		chunk := bytes.Repeat(lines, 64)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.Write(chunk); err != nil {
				return
			}
		}
	}()
	return dir, opened
}

// TestSignalsStopLongCommands: SIGINT and SIGTERM stop validate and pack
// promptly with exit 130 and 143, and pack leaves nothing at --out and no
// staging beside it.
func TestSignalsStopLongCommands(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		cmd  string
	}{
		{syscall.SIGINT, ExitSIGINT, "validate"},
		{syscall.SIGTERM, ExitSIGTERM, "validate"},
		{syscall.SIGINT, ExitSIGINT, "pack"},
		{syscall.SIGTERM, ExitSIGTERM, "pack"},
	} {
		t.Run(c.cmd+"/"+c.sig.String(), func(t *testing.T) {
			run, opened := endlessRun(t)
			outDir := t.TempDir()
			args := []string{c.cmd, run}
			if c.cmd == "pack" {
				args = append(args, "--out", filepath.Join(outDir, "b.tar"))
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "BENCHSEAL_TEST_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Signal once the command reads the records (a fixed sleep raced
			// the process start on a loaded machine: the signal came before
			// its handlers and killed it).
			select {
			case <-opened:
			case err := <-done:
				t.Fatalf("exited before reading the records: %v; stderr:\n%s", err, stderr.String())
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("did not open the records within 60 s")
			}
			cmd.Process.Signal(c.sig)
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("did not stop within 60 s of the signal")
			}
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got, c.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted by") {
				t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
			}
			if ents, _ := os.ReadDir(outDir); len(ents) > 0 {
				t.Errorf("left in the output directory: %v", ents)
			}
		})
	}
}

// TestSignalStopsCaptureKeepingTheRun: capture stopped by SIGINT or
// SIGTERM exits 130 or 143 like every command, keeps its run directory
// valid and marked incomplete, and its --help says both.
func TestSignalStopsCaptureKeepingTheRun(t *testing.T) {
	var help bytes.Buffer
	if code := run(context.Background(), []string{"capture", "--help"}, DefaultDeps(&IO{Out: &help, ErrOut: &help, Getenv: os.Getenv})); code != ExitOK {
		t.Fatalf("capture --help: exit %d", code)
	}
	for _, want := range []string{"130", "143", "run kept, marked\nincomplete"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("capture --help does not say %q", want)
		}
	}
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, ExitSIGINT}, {syscall.SIGTERM, ExitSIGTERM}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			cmd := exec.Command(os.Args[0], "capture", "--simulate", "--out", out, "--concurrency", "2",
				"--requests", "1000", "--output-tokens", "100000", "--input-tokens", "8", "--grace", "50ms", "--progress", "never")
			cmd.Env = append(os.Environ(), "BENCHSEAL_TEST_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signal once the run directory exists (the preflight is over).
			for i := 0; i < 300; i++ {
				if _, err := os.Stat(filepath.Join(out, schema.ManifestFile)); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond)
			cmd.Process.Signal(c.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("did not stop within 60 s of the signal")
			}
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", got, c.code, stderr.String())
			}
			sum, err := schema.CheckRunDir(context.Background(), out, 10, nil)
			if err != nil {
				t.Fatalf("run left by the interrupted capture: %v", err)
			}
			if !sum.Incomplete {
				t.Errorf("run not marked incomplete: %+v", sum)
			}
		})
	}
}
