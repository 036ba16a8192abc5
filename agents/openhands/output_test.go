package openhands

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/redact"
)

// eventsOf reads the event stream of a trajectory file.
func eventsOf(t *testing.T, path string) *compact.Transcript {
	t.Helper()
	tr, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestReadOutput: an instance of an output.jsonl reads as its history
// does, after a custom entry holding the rest of the line.
func TestReadOutput(t *testing.T) {
	tests := []struct {
		name, path, id string
		history        string // the trajectory its history is
		session        string
	}{
		{"only instance", "testdata/output-one.jsonl", "", "testdata/basic.json", "example__repo-1"},
		{"only instance, named", "testdata/output-one.jsonl", "example__repo-1", "testdata/basic.json", "example__repo-1"},
		{"first of three", "testdata/output.jsonl", "example__repo-1", "testdata/basic.json", "example__repo-1"},
		{"with a condensation", "testdata/output.jsonl", "example__repo-2", "testdata/condensation.json", "example__repo-2"},
		{"last of three", "testdata/output.jsonl", "example__repo-3", "testdata/basic_gui_mode.json", "example__repo-3"},
		{"resolver", "testdata/resolver-output.jsonl", "", "testdata/basic.json", "42"},
		{"resolver, named", "testdata/resolver-output.jsonl", "42", "testdata/basic.json", "42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFileInstance(tt.path, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			want := eventsOf(t, tt.history)
			if got.SessionID != tt.session {
				t.Errorf("SessionID = %q, want %q", got.SessionID, tt.session)
			}
			if len(got.Entries) != len(want.Entries)+1 {
				t.Fatalf("%d entries, want %d (the history's and the instance)", len(got.Entries), len(want.Entries)+1)
			}
			head := got.Entries[0]
			if head.Kind != compact.KindCustom || head.Meta == nil || head.Meta.CustomType != "openhands:instance" {
				t.Fatalf("first entry %+v, want the openhands:instance custom entry", head)
			}
			var rest map[string]json.RawMessage
			if err := json.Unmarshal(head.Meta.Data, &rest); err != nil {
				t.Fatal(err)
			}
			if _, ok := rest["history"]; ok {
				t.Error("the instance entry repeats the history")
			}
			if _, ok := rest["instruction"]; !ok {
				t.Error("the instance entry lost the instruction")
			}
			for i, e := range want.Entries {
				g := got.Entries[i+1]
				if g.ID != e.ID || g.Kind != e.Kind || (e.Message != nil) != (g.Message != nil) {
					t.Fatalf("entry %d: %s %s, want %s %s", i+1, g.ID, g.Kind, e.ID, e.Kind)
				}
			}
			if got.Model != want.Model {
				t.Errorf("Model = %q, want %q", got.Model, want.Model)
			}
		})
	}
}

// TestReadOutputCredentials: what looks like a credential in the
// instance's other members is not copied.
func TestReadOutputCredentials(t *testing.T) {
	got, err := ReadFile("testdata/output-one.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	data := string(got.Entries[0].Meta.Data)
	if strings.Contains(data, "sk-ant-api03") || !strings.Contains(data, redact.Placeholder) {
		t.Errorf("instance entry %s", data)
	}
}

// TestReadOutputPairs: the old history form, [action, observation]
// pairs, reads as the events in order.
func TestReadOutputPairs(t *testing.T) {
	raw, err := os.ReadFile("testdata/basic.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev []json.RawMessage
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	pairs := [][]json.RawMessage{{ev[0], json.RawMessage(`{"id":-1,"observation":"null","content":"","extras":{}}`)}, {ev[1], ev[2]}, {ev[3]}}
	line, _ := json.Marshal(map[string]any{"instance_id": "p-1", "test_result": map[string]any{}, "history": pairs})
	got, err := ReadOutput(line, "pairs.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	want := eventsOf(t, "testdata/basic.json")
	// The null observation becomes a custom entry of its own.
	if len(got.Entries) != len(want.Entries)+2 {
		t.Errorf("%d entries, want %d", len(got.Entries), len(want.Entries)+2)
	}
}

// TestReadOutputErrors: which instance is missing or wrong, and lines
// that are no instances, in one line naming the file and line.
func TestReadOutputErrors(t *testing.T) {
	three, err := os.ReadFile("testdata/output.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, data, id, want string
		instance             bool
	}{
		{"several, none named", string(three), "",
			`f: OpenHands output.jsonl of 3 instances ("example__repo-1", "example__repo-2", "example__repo-3"): name one`, true},
		{"unknown id", string(three), "nope",
			`f: no instance "nope"; the file holds "example__repo-1", "example__repo-2", "example__repo-3": name one`, true},
		{"empty", "\n\n", "", "f: no instances (an OpenHands output.jsonl holds one JSON object per line)", false},
		{"no id", `{"test_result":{},"history":[]}`, "", "f:1: neither instance_id nor issue.number: not an OpenHands evaluation or resolver output line", false},
		{"no history", `{"instance_id":"a","test_result":{}}` + "\n" + `{"instance_id":"b","test_result":{},"history":null}`, "", `f:1: instance "a": no history`, false},
		{"id of a wrong type", `{"instance_id":true,"history":[]}`, "", "f:1: instance_id: not a string or an integer", false},
		{"history not an array", `{"instance_id":"a","test_result":{},"history":{}}`, "", `f:1: instance "a": history: not an array`, false},
		{"history of numbers", `{"instance_id":"a","test_result":{},"history":[1]}`, "", `f:1: instance "a": history[0]: not an event object`, false},
		{"torn line", `{"instance_id":"a","history":[`, "", "f:1: truncated JSON: unexpected EOF", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadOutput([]byte(tt.data), "f", tt.id)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %s\nwant %s", err, tt.want)
			}
			if errors.Is(err, ErrInstance) != tt.instance {
				t.Errorf("errors.Is(err, ErrInstance) = %v, want %v", !tt.instance, tt.instance)
			}
		})
	}
	if _, err := ReadFileInstance("testdata/basic.json", "x"); !errors.Is(err, ErrNotOutput) {
		t.Errorf("an instance named for a trajectory: %v", err)
	}
}

// TestDetectOutput: output.jsonl is recognised by its first keys, also
// when the head ends inside the first line; event streams and other
// agents' files are not taken for it.
func TestDetectOutput(t *testing.T) {
	one, err := os.ReadFile("testdata/output.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	resolver, err := os.ReadFile("testdata/resolver-output.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		head string
		want bool
	}{
		{"evaluation output", string(one), true},
		{"cut after two keys", string(one[:60]), true},
		{"resolver output", string(resolver), true},
		{"only an instance_id", `{"instance_id":"a"}`, false},
		{"instance_id second", `{"test_result":{},"instance_id":"a"}`, false},
		{"SWE-bench prediction", `{"instance_id":"a","model_patch":"","model_name_or_path":"x"}`, false},
		{"trajectory", `[{"id":0,"timestamp":"t","source":"user","action":"message"}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DetectOutput([]byte(tt.head)); got != tt.want {
				t.Errorf("DetectOutput = %v, want %v", got, tt.want)
			}
			if got := Detect([]byte(tt.head)); tt.want && !got {
				t.Error("Detect does not take it")
			}
		})
	}
}

// FuzzReadOutput: any input either reads or fails with an error, never a
// panic.
func FuzzReadOutput(f *testing.F) {
	one, err := os.ReadFile("testdata/output-one.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(one, "")
	f.Add([]byte(`{"instance_id":"a","test_result":{},"history":[[{"action":"message"}]]}`), "a")
	f.Add([]byte(`{"issue":{"number":1},"issue_type":"issue","history":[]}`), "1")
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		tr, err := ReadOutput(data, "f", id)
		if err == nil && (len(tr.Entries) == 0 || tr.Entries[0].Meta == nil) {
			t.Fatal("read without the instance entry")
		}
	})
}
