package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compactkit/compact/session"
)

// FuzzRead checks that Read never panics, that its errors are one line
// naming the file, and that whatever it accepts imports as a pi session.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		// The whole files are read by the other tests; the fuzzer gets
		// their first 8 KiB (cut mid-line, so a torn last line too),
		// which keeps each execution fast enough to mutate.
		f.Add(data[:min(len(data), 8<<10)])
	}
	for _, s := range []string{
		"",
		"\n",
		userText("u1", "", "hi") + "\n" + assistantLine("a1", "u1", "m", `{"type":"tool_use","id":"c","name":"n","input":[1]}`) + "\n",
		`{"type":"user","uuid":"u","parentUuid":"u","message":{"content":[{"type":"tool_result","tool_use_id":"c","content":[{"type":"image","source":{"type":"url"}}]}]}}`,
		`{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"zz","compactMetadata":{"preTokens":"x"}}` + "\n" +
			`{"type":"user","uuid":"s","parentUuid":"b","isCompactSummary":true,"message":{"content":[{"type":"text","text":"sum"}]}}` + "\n",
		`{"type":"assistant","uuid":"a","message":{"id":"m","content":"plain"}}` + "\n" + `{"type":"assistant","uuid":"a","message":{"id":"m","content":[]}}`,
		`{"type":"x"}` + "\n" + `null` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read(data, "fuzz.jsonl")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.jsonl:") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line naming the file", err)
			}
			return
		}
		if _, err := session.FromTranscript(tr, "fuzz", session.Options{}); err != nil {
			t.Fatalf("accepted transcript does not import: %v", err)
		}
	})
}
