package jsonrec

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestRecords(t *testing.T) {
	decode := func(r Record) (Record, error) {
		if _, err := OptString(r.Fields, "type"); err != nil {
			return Record{}, err
		}
		return r, nil
	}
	recs, warnings, err := Records([]byte("{\"type\":\"a\"}\n\n{\"type\":\"b\"}\n{\"type\":"), "f", decode)
	if err != nil || len(recs) != 2 || len(warnings) != 1 {
		t.Fatalf("Records = %v, %q, %v", recs, warnings, err)
	}
	if r := recs[1]; r.Line != 3 || string(r.Raw) != `{"type":"b"}` || string(r.Fields["type"]) != `"b"` {
		t.Errorf("second record = %d %s %v", r.Line, r.Raw, r.Fields)
	}
	if c := recs[0].Copy(); string(c) != string(recs[0].Raw) || &c[0] == &recs[0].Raw[0] {
		t.Errorf("Copy = %s, the same bytes or not its own", c)
	}
	for data, want := range map[string]string{"{}\nnull\n": "f:2: not a JSON object: null", "{\"type\":1}\n{}": "f:1: field type: want a string, have 1"} {
		if _, _, err := Records([]byte(data), "f", decode); err == nil || err.Error() != want {
			t.Errorf("Records(%q) error %v, want %q", data, err, want)
		}
	}
}

func TestReadRecords(t *testing.T) {
	decode := func(r Record) (int, error) { return r.Line, nil }
	build := func(lines []int) (*compact.Transcript, error) {
		if len(lines) == 0 {
			return nil, errors.New("no lines")
		}
		return &compact.Transcript{Warnings: []string{"built"}}, nil
	}
	tr, err := ReadRecords([]byte("{}\n{\"a\":"), "f", decode, build)
	if err != nil || len(tr.Warnings) != 2 || !strings.HasPrefix(tr.Warnings[0], "f:2: the last line is cut short") || tr.Warnings[1] != "built" {
		t.Fatalf("ReadRecords = %v, %v; want the cut line's warning first", tr, err)
	}
	if _, err := ReadRecords([]byte("\n"), "f", decode, build); err == nil || err.Error() != "no lines" {
		t.Errorf("a build error: %v", err)
	}
	if _, err := ReadRecords([]byte("[]\n"), "f", decode, build); err == nil || !strings.HasPrefix(err.Error(), "f:1: not a JSON object") {
		t.Errorf("a bad line: %v", err)
	}
}

func TestSniff(t *testing.T) {
	whole := func(obj map[string]json.RawMessage) bool { _, ok := obj["a"]; return ok }
	cut := func(line []byte) bool { return strings.HasPrefix(string(line), `{"a":`) }
	for head, want := range map[string]bool{`{"a":1}`: true, "{\"b\":1}\n": false, `{"a":"cut`: true, `{"b":"cut`: false, "[1]\n": false, "": false} {
		if got := Sniff([]byte(head), whole, cut); got != want {
			t.Errorf("Sniff(%q) = %v, want %v", head, got, want)
		}
	}
}
