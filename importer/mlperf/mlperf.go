package mlperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Tool is the importer's tool name: the name of its registration,
// schema.MLPerf.
var Tool = schema.MLPerf.Name

// Registration lists the importer in importer's registry (records built in memory: the input cannot be read element by element).
var Registration = ingest.Registration{Peer: schema.MLPerf, Files: "mlperf_log_summary.txt and/or mlperf_log_detail.txt (external reference, no records)", Parse: Parse,
	// MLPerf LoadGen: the summary's banner, the detail log's line prefix.
	Format: ingest.Format{Title: "an MLPerf LoadGen log", Match: func(s *ingest.Sniffed) bool {
		return bytes.Contains(s.Head, []byte("MLPerf Results Summary")) || bytes.HasPrefix(s.Head, []byte(":::MLLOG"))
	}},
}

// Summary is mlperf_log_summary.txt as "key : value" pairs, in order.
type Summary struct {
	Pairs [][2]string
}

// Get returns the first value of key, and whether it is there.
func (s *Summary) Get(key string) (string, bool) {
	for _, p := range s.Pairs {
		if p[0] == key {
			return p[1], true
		}
	}
	return "", false
}

func parseSummary(data []byte, name string) (*Summary, error) {
	if !bytes.Contains(data, []byte("MLPerf Results Summary")) {
		return nil, ingest.Errorf(name, "not an MLPerf LoadGen summary (no \"MLPerf Results Summary\" header)")
	}
	s := &Summary{}
	// open is the index of the pair a following line without a key
	// continues (-1: none). LoadGen writes some values over several
	// lines: "TTFT Early Stopping Result:" then " * Run successful.",
	// "WARNING: ..." then its explanation; a blank or separator line ends
	// them. The lines are joined with a space.
	open := -1
	for _, line := range ingest.SplitLines(data) {
		text := strings.TrimSpace(string(line))
		if text == "" || strings.HasPrefix(text, "=") {
			open = -1
			continue
		}
		k, v, ok := strings.Cut(text, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.HasPrefix(k, "*") {
			if open >= 0 {
				p := &s.Pairs[open]
				p[1] = strings.TrimSpace(p[1] + " " + text) // a manifest string holds no newline
			}
			continue
		}
		s.Pairs = append(s.Pairs, [2]string{k, v})
		open = len(s.Pairs) - 1
	}
	for _, k := range []string{"Scenario", "Result is"} {
		if _, ok := s.Get(k); !ok {
			return nil, ingest.Errorf(name, "truncated or altered MLPerf summary: no %q line", k)
		}
	}
	if !bytes.Contains(data, []byte("Test Parameters Used")) {
		return nil, ingest.Errorf(name, "truncated MLPerf summary: no \"Test Parameters Used\" section")
	}
	return s, nil
}

// Entry is one ":::MLLOG" line of mlperf_log_detail.txt.
type Entry struct {
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	TimeMS    json.Number     `json:"time_ms"`
	EventType string          `json:"event_type"`
	Metadata  struct {
		IsError   bool `json:"is_error"`
		IsWarning bool `json:"is_warning"`
	} `json:"metadata"`
	Line int `json:"-"`
}

// Detail is mlperf_log_detail.txt.
type Detail struct {
	Entries []Entry
	byKey   map[string]int
}

// Get returns the value of key as text (strings unquoted), and whether
// it is there.
func (d *Detail) Get(key string) (string, bool) {
	i, ok := d.byKey[key]
	if !ok {
		return "", false
	}
	raw := d.Entries[i].Value
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return string(raw), true
}

const mllog = ":::MLLOG "

func parseDetail(data []byte, name string) (*Detail, error) {
	d := &Detail{byKey: map[string]int{}}
	for i, line := range ingest.SplitLines(data) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if !bytes.HasPrefix(line, []byte(mllog)) {
			return nil, ingest.RecordErrorf(name, i+1, i, "", "not a \":::MLLOG {json}\" line: not an MLPerf LoadGen detail log")
		}
		var e Entry
		if err := ingest.DecodeJSONLine(name, i+1, line[len(mllog):], &e); err != nil {
			return nil, err
		}
		if e.Key == "" {
			return nil, ingest.RecordErrorf(name, i+1, i, "key", "missing")
		}
		e.Line = i + 1
		if _, dup := d.byKey[e.Key]; !dup {
			d.byKey[e.Key] = len(d.Entries)
		}
		d.Entries = append(d.Entries, e)
	}
	if len(d.Entries) == 0 {
		return nil, ingest.Errorf(name, "no :::MLLOG lines")
	}
	return d, nil
}

// Parse builds an import from LoadGen logs (either or both). Paths in the
// file names that follow the submission layout
// <division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_N/
// fill division, submitter, system and benchmark.
func Parse(files []ingest.File) (*ingest.Result, error) {
	var (
		sum  *Summary
		det  *Detail
		dirs []string
	)
	for _, f := range files {
		switch {
		case bytes.HasPrefix(ingest.Sniff(f.Data, len(mllog)), []byte(mllog)):
			if det != nil {
				return nil, ingest.Errorf(f.Name, "a second detail log")
			}
			d, err := parseDetail(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			det = d
		case bytes.Contains(f.Data[:min(len(f.Data), 4096)], []byte("MLPerf Results Summary")):
			if sum != nil {
				return nil, ingest.Errorf(f.Name, "a second summary")
			}
			s, err := parseSummary(f.Data, f.Name)
			if err != nil {
				return nil, err
			}
			sum = s
		default:
			return nil, ingest.Errorf(f.Name, "not an MLPerf LoadGen log (expected mlperf_log_summary.txt or mlperf_log_detail.txt)")
		}
		dirs = append(dirs, path.Dir(strings.ReplaceAll(f.Name, "\\", "/")))
	}
	if sum == nil && det == nil {
		return nil, errcond.Errorf(ingest.ErrNoFiles, "import mlperf: no input file")
	}
	return build(sum, det, dirs, files)
}

// detailKeys are copied into the reference's results, by detail-log key.
var detailKeys = []string{
	"loadgen_version", "loadgen_git_commit_date", "loadgen_git_status_message", "test_datetime", "sut_name", "qsl_name",
	"effective_scenario", "effective_test_mode", "effective_target_qps", "effective_target_latency_percentile",
	"effective_min_duration_ms", "effective_min_query_count", "effective_performance_sample_count",
	"effective_qsl_rng_seed", "effective_sample_index_rng_seed", "effective_schedule_rng_seed",
	"requested_server_ttft_latency", "requested_server_tpot_latency", "requested_use_token_latencies",
	"result_validity", "result_perf_constraints_met", "result_min_duration_met", "result_min_queries_met", "early_stopping_met",
	"result_completed_samples_per_sec", "result_scheduled_samples_per_sec", "result_completed_tokens_per_second",
	"result_query_count", "result_mean_latency_ns", "result_99.00_percentile_latency_ns",
	"result_first_token_mean_latency_ns", "result_first_token_99.00_percentile_latency_ns",
	"result_time_per_output_token_99.00_percentile_ns", "result_time_to_output_token_mean",
	"generated_query_count", "generated_query_duration", "num_errors",
}

// fromSummaryLog copies the summary log's pairs into ref's results (the
// first of a repeated key) and takes its scenario, result and system.
func fromSummaryLog(ref *schema.ExternalRef, sum *Summary) {
	for _, p := range sum.Pairs {
		if _, dup := ref.Results["summary: "+p[0]]; !dup {
			ref.Results["summary: "+p[0]] = p[1]
		}
	}
	if v, ok := sum.Get("Scenario"); ok {
		ref.Scenario = v
	}
	if v, ok := sum.Get("Result is"); ok {
		ref.Status = v
	}
	if v, ok := sum.Get("SUT name"); ok {
		ref.System = v
	}
}

// fromDetailLog copies the detail log's detailKeys into ref's results,
// takes its LoadGen version, its scenario (when the summary gave none)
// and validity, counts its error lines, and returns its test_datetime as
// the epoch (0 when absent or unparsable).
func fromDetailLog(ref *schema.ExternalRef, det *Detail) int64 {
	epoch := int64(0)
	for _, k := range detailKeys {
		if v, ok := det.Get(k); ok {
			ref.Results[k] = v
		}
	}
	if v, ok := det.Get("loadgen_version"); ok {
		ref.Version = strings.TrimSpace(strings.SplitN(v, "@", 2)[0])
	}
	if v, ok := det.Get("effective_scenario"); ok && ref.Scenario == "" {
		ref.Scenario = v
	}
	if v, ok := det.Get("result_validity"); ok {
		ref.Status = v
	}
	if v, ok := det.Get("test_datetime"); ok {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			epoch = t.UnixNano()
		}
	}
	errs := 0
	for _, e := range det.Entries {
		if e.Metadata.IsError {
			errs++
		}
	}
	ref.Results["detail: lines flagged is_error"] = fmt.Sprint(errs)
	return epoch
}

// build makes the run an external-evidence reference: what the summary
// and detail logs and the submission path say, with no records.
func build(sum *Summary, det *Detail, dirs []string, files []ingest.File) (*ingest.Result, error) {
	ref := schema.ExternalRef{Kind: "mlperf-inference", Results: map[string]string{}}
	if sum != nil {
		fromSummaryLog(&ref, sum)
	}
	epoch := int64(0)
	if det != nil {
		epoch = fromDetailLog(&ref, det)
	}
	logged := ref.Scenario // as LoadGen logged it
	if logged != "" {
		ref.Results[loggedScenario] = logged
	}
	benchmark := fromSubmissionPath(&ref, dirs)
	var derived []string
	if logged != "" && ref.Scenario != logged {
		derived = append(derived, fmt.Sprintf("external[0].scenario: %s, from the submission directory; LoadGen ran and logged it as %s (results[\"scenario (LoadGen)\"])", ref.Scenario, logged))
	}
	switch ref.Scenario {
	case "Server", "Interactive":
		// Only the datacenter category has these scenarios.
		ref.Category = "datacenter"
		derived = append(derived, fmt.Sprintf("external[0].category: datacenter, the only category with the %s scenario", ref.Scenario))
	case "SingleStream", "MultiStream":
		ref.Category = "edge"
		derived = append(derived, fmt.Sprintf("external[0].category: edge, the only category with the %s scenario", ref.Scenario))
	}
	n, acc, fromName := systemAccelerators(ref.System)
	if fromName {
		ref.AcceleratorCount = n
		ref.Results["accelerator (from system name)"] = acc
		derived = append(derived, fmt.Sprintf("external[0].accelerator_count: %d, from the system name %q", n, ref.System))
	}
	for _, f := range files {
		ref.Attachments = append(ref.Attachments, path.Base(f.Name))
	}
	sort.Strings(ref.Attachments)
	version := ""
	if det != nil {
		version, _ = det.Get("loadgen_version")
	}
	m := ingest.NewManifest(Tool, version, epoch, epoch)
	m.Client.Boundary = schema.BoundaryServerTimer
	m.Client.TokenCounts = ""
	m.External = []schema.ExternalRef{ref}
	for _, d := range derived {
		ingest.Derive(&m, "%s", d)
	}
	if benchmark != "" {
		m.Model.Name = benchmark
		ingest.Derive(&m, "model.name: the MLPerf benchmark named by the submission directory (%s)", benchmark)
	}
	// No load points: a point declares a load whose requests the run's
	// records hold, and LoadGen's logs hold none. The load LoadGen offered
	// (scenario, effective_target_qps, effective_min_duration_ms,
	// result_query_count) stays in the reference's results. load.mode still
	// says how LoadGen issued queries: Server is an open loop (Poisson
	// arrivals at target_qps), the other scenarios are not rate-driven.
	m.Load.Mode = schema.ModeConcurrency
	if strings.EqualFold(logged, "Server") {
		m.Load.Mode = schema.ModeRate
	}
	if fromName {
		// The submitter's name for the system, not a hardware query: the
		// label says so wherever the hardware is shown.
		m.Hardware.Accelerator, m.Hardware.AcceleratorCount = acc, schema.Count(n)
		m.Hardware.Details = map[string]string{"source": fmt.Sprintf("taken from the MLPerf system name %q (the submission directory), not queried from the hardware", ref.System)}
		ingest.Derive(&m, "hardware.accelerator, hardware.accelerator_count: %d × %s, taken from the MLPerf system name %q, not queried from the hardware", n, acc, ref.System)
	}
	ingest.Derive(&m, "load.mode: from the LoadGen scenario (%s; Server = open loop at target_qps); no load points: LoadGen's logs hold no per-request data, and its offered load is kept in external[0].results", ref.Scenario)
	ingest.Derive(&m, "no records: MLPerf LoadGen logs hold aggregates only; the run is an external-evidence reference (manifest.external), never fake requests")
	if epoch != 0 {
		ingest.Derive(&m, "epoch_unix_ns, start_time, finish_time: the detail log's test_datetime")
	}
	setSLO(&m, det, sum)
	return &ingest.Result{Manifest: m, Records: nil}, nil
}

// fromSubmissionPath fills ref's division, submitter, system, benchmark
// and scenario directory from the first of dirs that follows the
// submission layout, and returns the benchmark ("" when none does).
func fromSubmissionPath(ref *schema.ExternalRef, dirs []string) string {
	benchmark := ""
	// Submission layout: .../<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_N
	for _, d := range dirs {
		parts := strings.Split(d, "/")
		for i := range parts {
			if parts[i] == "results" && i >= 2 && i+3 < len(parts) {
				ref.Division = parts[i-2]
				ref.Submitter = parts[i-1]
				ref.System = parts[i+1]
				ref.Results["benchmark"] = parts[i+2]
				benchmark = parts[i+2]
				ref.Category = ""
				if ref.Scenario != parts[i+3] {
					ref.Results["submission scenario directory"] = parts[i+3]
				}
				// LoadGen runs the Interactive scenario as Server with
				// tighter latency limits and logs "Server"; only the
				// submission directory says Interactive.
				if parts[i+3] == "Interactive" && ref.Scenario == "Server" {
					ref.Scenario = "Interactive"
				}
				break
			}
		}
	}
	return benchmark
}

// setSLO sets m's SLO from LoadGen's latency constraints and notes the
// SUT name the detail log gives.
func setSLO(m *schema.Manifest, det *Detail, sum *Summary) {
	m.SLO.TTFT = schema.Duration(latencyLimit(det, "requested_server_ttft_latency", sum, "ttft_latency (ns)"))
	m.SLO.TPOT = schema.Duration(latencyLimit(det, "requested_server_tpot_latency", sum, "tpot_latency (ns)"))
	if m.SLO.TPOT > 0 {
		m.SLO.OneToken = schema.OneTokenFail // LoadGen logs n_tokens ≤ 1 as error_runtime
	}
	if m.SLO.TTFT > 0 || m.SLO.TPOT > 0 {
		ingest.Derive(m, "slo: the LoadGen server constraints (p99 TTFT and TPOT limits; the detail log's requested_server_*_latency, else the summary's Test Parameters Used), not a per-request SLO")
	}
	if det != nil {
		if v, ok := det.Get("sut_name"); ok {
			ingest.SetNote(m, "mlperf.sut_name", v)
		}
	}
}

// loggedScenario is the results key of the scenario as LoadGen logged it
// (external[0].scenario may say Interactive, from the submission
// directory).
const loggedScenario = "scenario (LoadGen)"

// latencyLimit returns a LoadGen latency constraint in ns: the detail
// log's key when it is there, else the summary's "Test Parameters Used"
// line sumKey; 0 when neither states a positive integer.
func latencyLimit(det *Detail, detKey string, sum *Summary, sumKey string) int64 {
	var v string
	ok := false
	if det != nil {
		v, ok = det.Get(detKey)
	}
	if !ok && sum != nil {
		v, ok = sum.Get(sumKey)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if !ok || err != nil || ns <= 0 {
		return 0
	}
	return ns
}

// systemAccelerators reads the accelerator count and model from an MLPerf
// system name of the usual "<N>x<accelerator>[_<N>x<cpu>...]" shape, such
// as "8xMI300X_2xEPYC_9575F" (8 MI300X). ok is false for other shapes.
func systemAccelerators(system string) (n int, accelerator string, ok bool) {
	first, _, _ := strings.Cut(system, "_")
	count, acc, found := strings.Cut(first, "x")
	if !found || acc == "" {
		return 0, "", false
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > 1<<20 {
		return 0, "", false
	}
	return n, acc, true
}

// PathFields clears, in a copy of ref, the fields the importer reads from
// the submission's directory names (division, submitter, system, category,
// accelerator count, benchmark and scenario directory) rather than from
// the log files, which an import keeps without their paths. What is left
// is derived from the attached logs alone, so a re-import reproduces it.
func PathFields(ref schema.ExternalRef) schema.ExternalRef {
	ref.Division, ref.Submitter, ref.System, ref.Category, ref.AcceleratorCount = "", "", "", "", 0
	if v, ok := ref.Results[loggedScenario]; ok {
		ref.Scenario = v // Interactive comes from the directory
	}
	if ref.Results != nil {
		r := make(map[string]string, len(ref.Results))
		for k, v := range ref.Results {
			switch k {
			case "benchmark", "submission scenario directory", "accelerator (from system name)":
			default:
				r[k] = v
			}
		}
		ref.Results = r
	}
	return ref
}
