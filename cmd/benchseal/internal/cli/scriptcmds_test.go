package cli

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdJSONL is the script command "jsonl FILE LINE shift FIELD DELTA" (adds
// DELTA to the integer FIELD of the JSON object on 1-based line LINE) or
// "jsonl FILE LINE drop" (removes the line): the edits a tampering
// publisher makes to records.jsonl.
func cmdJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: jsonl FILE LINE (shift FIELD DELTA | copy FIELD FROMLINE | drop)")
	}
	path := ts.MkAbs(args[0])
	b, err := os.ReadFile(path)
	ts.Check(err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	if n < 1 || n > len(lines) {
		ts.Fatalf("jsonl: %s has %d lines, no line %d", args[0], len(lines), n)
	}
	switch {
	case args[2] == "drop" && len(args) == 3:
		lines = append(lines[:n-1], lines[n:]...)
	case args[2] == "shift" && len(args) == 5:
		var obj map[string]json.RawMessage
		ts.Check(json.Unmarshal([]byte(lines[n-1]), &obj))
		v, err := strconv.ParseInt(string(obj[args[3]]), 10, 64)
		ts.Check(err)
		d, err := strconv.ParseInt(args[4], 10, 64)
		ts.Check(err)
		obj[args[3]] = json.RawMessage(strconv.FormatInt(v+d, 10))
		out, err := json.Marshal(obj)
		ts.Check(err)
		lines[n-1] = string(out)
	case args[2] == "copy" && len(args) == 5:
		// copy FIELD FROMLINE: the field takes line FROMLINE's value.
		from, err := strconv.Atoi(args[4])
		ts.Check(err)
		if from < 1 || from > len(lines) {
			ts.Fatalf("jsonl: %s has %d lines, no line %d", args[0], len(lines), from)
		}
		var obj, src map[string]json.RawMessage
		ts.Check(json.Unmarshal([]byte(lines[n-1]), &obj))
		ts.Check(json.Unmarshal([]byte(lines[from-1]), &src))
		obj[args[3]] = src[args[3]]
		out, err := json.Marshal(obj)
		ts.Check(err)
		lines[n-1] = string(out)
	default:
		ts.Fatalf("usage: jsonl FILE LINE (shift FIELD DELTA | copy FIELD FROMLINE | drop)")
	}
	ts.Check(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// cmdRetime is the script command "retime FILE DIVISOR": it divides every
// time of every record in FILE (sent_ns, end_ns, scheduled_ns and each of
// chunks_ns) by DIVISOR, the edit of a publisher who makes a whole run look
// DIVISOR times as fast and keeps it consistent.
func cmdRetime(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: retime FILE DIVISOR")
	}
	path := ts.MkAbs(args[0])
	d, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	b, err := os.ReadFile(path)
	ts.Check(err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, line := range lines {
		var obj map[string]json.RawMessage
		ts.Check(json.Unmarshal([]byte(line), &obj))
		for _, k := range []string{"sent_ns", "end_ns", "scheduled_ns"} {
			if raw, ok := obj[k]; ok {
				v, err := strconv.ParseInt(string(raw), 10, 64)
				ts.Check(err)
				obj[k] = json.RawMessage(strconv.FormatInt(v/d, 10))
			}
		}
		if raw, ok := obj["chunks_ns"]; ok {
			var cs []int64
			ts.Check(json.Unmarshal(raw, &cs))
			for j := range cs {
				cs[j] /= d
			}
			obj["chunks_ns"], err = json.Marshal(cs)
			ts.Check(err)
		}
		out, err := json.Marshal(obj)
		ts.Check(err)
		lines[i] = string(out)
	}
	ts.Check(os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

// cmdJSONValid is the script command "jsonvalid FILE": FILE holds one
// well-formed JSON value (a renderer that drops a separator writes text
// that every JSON reader refuses, whatever the regular expressions match).
func cmdJSONValid(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonvalid FILE")
	}
	valid := json.Valid([]byte(ts.ReadFile(args[0])))
	switch {
	case neg && valid:
		ts.Fatalf("%s is valid JSON", args[0])
	case !neg && !valid:
		ts.Fatalf("%s is not valid JSON", args[0])
	}
}

// cmdRunID is the script command "runid DIR ID": it sets manifest.run_id
// of the run directory DIR to ID, so that a script can have two runs of
// identical records that are two runs (synth of one seed gives one run id).
func cmdRunID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: runid DIR ID")
	}
	path := ts.MkAbs(args[0] + "/manifest.json")
	b, err := os.ReadFile(path)
	ts.Check(err)
	var m map[string]json.RawMessage
	ts.Check(json.Unmarshal(b, &m))
	id, err := json.Marshal(args[1])
	ts.Check(err)
	m["run_id"] = id
	out, err := json.MarshalIndent(m, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(path, append(out, '\n'), 0o644))
}
