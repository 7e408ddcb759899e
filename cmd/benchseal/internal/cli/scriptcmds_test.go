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
