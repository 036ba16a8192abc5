package geminicli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/session"
)

// FuzzRead checks that no input makes Read panic, and that what it returns
// can be imported.
func FuzzRead(f *testing.F) {
	files, err := filepath.Glob("testdata/*.json*")
	if err != nil || len(files) == 0 {
		f.Fatal("no testdata", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("{\"sessionId\":\"s\",\"projectHash\":\"p\"}\n{\"$rewindTo\":\"x\"}\n{\"id\":\"a\",\"type\":\"gemini\",\"toolCalls\":[{}]}\n"))
	f.Add([]byte(`{"history":[{"role":"user","parts":[{"functionResponse":{}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		tr, err := Read(data, "fuzz")
		if err != nil {
			return
		}
		if _, err := session.FromTranscript(tr, "fuzz", session.Options{}); err != nil {
			t.Fatalf("FromTranscript: %v", err)
		}
	})
}
