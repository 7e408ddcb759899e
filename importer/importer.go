package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ParseFunc parses the files of one import into a result with every
// record in memory. It never touches the file system.
type ParseFunc func(files []ingest.File) (*ingest.Result, error)

// Importer describes one tool's importer.
type Importer struct {
	// Tool is the name used on the command line and in claims: Peer.Name.
	Tool string
	// Peer is the tool's registration, which its replay definitions
	// point to as well.
	Peer *schema.PeerTool
	// Files describes the files the importer takes.
	Files string
	// Parse returns every record in memory (tests, small inputs).
	Parse ParseFunc
	// Stream passes each record on as it is built; Import and verify's
	// re-derivation use it.
	Stream ingest.StreamFunc

	// parser is the tool package's own parse or stream function, by
	// which the contract tests find the package (and its fuzz target).
	parser any
}

// streamed is the importer of a tool whose parser emits records as it
// reads them.
func streamed(peer *schema.PeerTool, files string, stream ingest.StreamFunc) Importer {
	inner := stream
	stream = checked(peer.Name, stream)
	return Importer{Tool: peer.Name, Peer: peer, Files: files, Parse: func(f []ingest.File) (*ingest.Result, error) { return ingest.Collect(stream, f) }, Stream: stream, parser: inner}
}

// inMemory is the importer of a tool whose input cannot be read element
// by element: the records are built in memory, then written.
func inMemory(peer *schema.PeerTool, files string, parse ParseFunc) Importer {
	inner := parse
	parse = func(f []ingest.File) (*ingest.Result, error) {
		if err := checkTool(peer.Name, f); err != nil {
			return nil, err
		}
		return inner(f)
	}
	return Importer{Tool: peer.Name, Peer: peer, Files: files, Parse: parse, Stream: ingest.Stream(parse), parser: inner}
}

// checked is stream after checkTool: a file of another tool gets one
// error naming that tool before the parser reads it.
func checked(tool string, stream ingest.StreamFunc) ingest.StreamFunc {
	return func(f []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
		if err := checkTool(tool, f); err != nil {
			return nil, err
		}
		return stream(f, emit)
	}
}

// importers lists every tool's importer, from the Registration each
// importer package declares (registrations, in registry_gen.go).
var importers = func() []Importer {
	out := make([]Importer, len(registrations))
	for i, r := range registrations {
		if r.Stream != nil {
			out[i] = streamed(r.Peer, r.Files, r.Stream)
		} else {
			out[i] = inMemory(r.Peer, r.Files, r.Parse)
		}
	}
	return out
}()

// registry is importers by tool name.
var registry = func() map[string]Importer {
	out := make(map[string]Importer, len(importers))
	for _, im := range importers {
		out[im.Tool] = im
	}
	return out
}()

// Lookup returns the importer of tool, whose name is matched without
// regard to case (as replay --definitions matches its names).
func Lookup(tool string) (Importer, bool) {
	im, ok := registry[strings.ToLower(tool)]
	return im, ok
}

// Tools lists the tool names, sorted.
func Tools() []string {
	out := make([]string, 0, len(registry))
	for t := range registry {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Options are the options of Import.
type Options = ingest.WriteOptions

// ReadFiles reads input files from paths. Each file keeps its path as its
// name (the attachment is stored under the base name).
func ReadFiles(paths []string) ([]ingest.File, error) {
	var out []ingest.File
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read input: %w", err)
		}
		// Sized from the file's length: io.ReadAll alone would hold up to
		// twice the file while its buffer grows.
		var b []byte
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			f.Close()
			return nil, fmt.Errorf("read %s: is a directory: import takes the tool's output files themselves", p)
		}
		if err == nil && st.Mode().IsRegular() && st.Size() <= ingest.MaxFileSize {
			b = make([]byte, 0, st.Size()+1)
		}
		b, err = readAll(io.LimitReader(f, ingest.MaxFileSize+1), b)
		f.Close()
		if err != nil {
			// An *os.PathError names the file already.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return nil, err
			}
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if len(b) > ingest.MaxFileSize {
			return nil, fmt.Errorf("read %s: larger than %d bytes", p, ingest.MaxFileSize)
		}
		out = append(out, ingest.File{Name: filepath.ToSlash(p), Data: b})
	}
	return out, nil
}

// readAll appends r's bytes to b until EOF.
func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// Import parses files with tool's importer and writes the run directory
// at dest atomically, each record as it is parsed (ingest.WriteStream):
// on any error nothing is left at dest. The result holds no records;
// Result.Written counts them.
func Import(ctx context.Context, tool string, files []ingest.File, dest string, opts Options) (*ingest.Result, error) {
	im, ok := Lookup(tool)
	if !ok {
		return nil, fmt.Errorf("import: unknown tool %q (known: %v)", tool, Tools())
	}
	tool = im.Tool // the canonical spelling from here on
	if len(files) == 0 {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import %s: no input file", tool)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Credentials never reach the parser, the records or attachments/.
	files, warnings := ingest.Redact(files)
	stream := func(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
		res, err := im.Stream(files, func(rec *schema.Record) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return emit(rec)
		})
		if err != nil {
			return nil, err
		}
		return res, ctx.Err()
	}
	res, err := ingest.WriteStream(dest, tool, files, stream, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// A parser's own errors already say "import TOOL: …".
		if strings.HasPrefix(err.Error(), "import "+tool+": ") {
			return nil, err
		}
		return nil, fmt.Errorf("import %s: %w", tool, err)
	}
	res.Warnings = append(res.Warnings, warnings...)
	return res, nil
}
