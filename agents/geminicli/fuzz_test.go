package geminicli

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
	"github.com/compactkit/compact/session"
)

// FuzzRead checks that no input makes Read panic, and that what it returns
// can be imported.
func FuzzRead(f *testing.F) {
	readertest.SeedFiles(f, "testdata/*.json*", 0)
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
