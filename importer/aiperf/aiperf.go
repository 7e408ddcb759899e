package aiperf

import (
	"bytes"
	"encoding/json"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name, also the claims' definitions: the
// name of its registration, schema.AIPerf.
var Tool = schema.AIPerf.Name

// Registration lists the importer in importer's registry (records emitted as they are read).
var Registration = ingest.Registration{Peer: schema.AIPerf, Files: "profile_export.jsonl [profile_export_aiperf.json] [profile_export_raw.jsonl] [profile_export_aiperf.csv]", Stream: Stream,
	// AIPerf: every profile_export.jsonl record has metadata with the
	// request id; the summary JSON has aiperf_version, or records keyed by
	// metric tag; the CSV lists percentiles from p1 up; the GPU telemetry
	// export's lines name their dcgm_url and telemetry_data.
	Format: ingest.Format{Title: "AIPerf output", Match: func(s *ingest.Sniffed) bool {
		return s.Has("metadata.x_request_id", "metadata.credit_phase", "metadata.benchmark_phase", "aiperf_version", "records.request_latency", "records.time_to_first_token", "records.error_request_count") ||
			s.Has("dcgm_url") && s.Has("telemetry_data") ||
			bytes.HasPrefix(s.Head, []byte("Metric,avg,min,max,p1,"))
	}},
}

// PointName is the load point of an AIPerf import when the summary states
// no load; otherwise the point is named after its concurrency or rate.
const PointName = "profile"

// Parse builds an import from AIPerf files with every record in memory
// (Stream, collected).
func Parse(files []ingest.File) (*ingest.Result, error) {
	return ingest.Collect(Stream, files)
}

// Stream builds an import from AIPerf files: profile_export.jsonl
// (required), profile_export_aiperf.json (the tool's summary, turned into
// claims), profile_export_raw.jsonl (absolute per-chunk times) and
// gpu_telemetry_export.jsonl (the accelerators' telemetry, kept and
// checked whole: ParseTelemetry). Each
// file is recognised by its content. The JSON Lines files are read line
// by line and only where each line is and when it started are kept (16
// bytes a line); each record is rebuilt from its line and passed to emit
// in order of start. A line of profile_export.jsonl is decoded twice:
// its metadata to index it, and whole to build its record. A raw export
// line is decoded whole to index it and again when a record uses it.
//
// The records are checked as they are built, in order of start. When one
// is bad, the files are checked again, decoding every line whole in file
// order, so that the error reported is that of the first bad line of the
// file, whatever order the lines started in. An error of emit (a full
// disk, a cancelled import) is returned at once, as is.
func Stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	var emitErr error
	res, err := stream(files, func(rec *schema.Record) error {
		emitErr = emit(rec)
		return emitErr
	})
	if err != nil && emitErr == nil {
		if _, first := stream(files, nil); first != nil {
			return nil, first
		}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// stream is Stream without the second look; without emit it decodes every
// line whole and builds the records in file order (build).
func stream(files []ingest.File, emit ingest.RecordFunc) (*ingest.Result, error) {
	full := emit == nil
	var (
		exp, raw *lineIndex
		sum      *Summary
		sumOf    string
		tel      *Telemetry
	)
	for _, f := range files {
		head := ingest.Sniff(f.Data, 4096)
		switch {
		case len(head) == 0:
			return nil, ingest.Errorf(f.Name, "empty file")
		case bytes.HasPrefix(head, []byte("Metric,")):
			// The CSV twin of the summary: kept as an attachment only.
		case head[0] == '{' && IsTelemetry(f.Data):
			if tel != nil {
				return nil, ingest.Errorf(f.Name, "a second GPU telemetry export (first was %s)", tel.File)
			}
			t, err := ParseTelemetry(f.Name, f.Data)
			if err != nil {
				return nil, err
			}
			tel = t
		case head[0] == '{' && firstLineHas(f.Data, "start_perf_ns"):
			if raw != nil {
				return nil, ingest.Errorf(f.Name, "a second raw export (first was %s)", raw.name)
			}
			r, err := indexLines(f.Data, f.Name, true, full)
			if err != nil {
				return nil, err
			}
			raw = r
		case head[0] == '{' && firstLineHas(f.Data, "metadata"):
			if exp != nil {
				return nil, ingest.Errorf(f.Name, "a second profile_export.jsonl (first was %s)", exp.name)
			}
			l, err := indexLines(f.Data, f.Name, false, full)
			if err != nil {
				return nil, err
			}
			exp = l
		case head[0] == '{':
			if sum != nil {
				return nil, ingest.Errorf(f.Name, "a second summary (first was %s)", sumOf)
			}
			s, err := parseSummary(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			sum, sumOf = s, f.Name
		default:
			return nil, ingest.Errorf(f.Name, "not an AIPerf export (expected profile_export.jsonl, profile_export_aiperf.json, profile_export_raw.jsonl or gpu_telemetry_export.jsonl)")
		}
	}
	if exp == nil && raw == nil {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import aiperf: no input file: need profile_export.jsonl (or profile_export_raw.jsonl)")
	}
	return build(exp, sum, sumOf, raw, tel, emit)
}

// firstLineHas reports whether the first line of data is a JSON object
// with the top-level key.
func firstLineHas(data []byte, key string) bool {
	line := data
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		line = data[:i]
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return false
	}
	_, ok := obj[key]
	return ok
}
