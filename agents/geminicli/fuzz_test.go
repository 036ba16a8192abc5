package geminicli

import (
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// FuzzRead checks that no input makes Detect or Read panic, and that what
// Read returns imports as a pi session, with stable ids.
func FuzzRead(f *testing.F) {
	readertest.SeedFiles(f, "testdata/*.json*", 0)
	f.Add([]byte("{\"sessionId\":\"s\",\"projectHash\":\"p\"}\n{\"$rewindTo\":\"x\"}\n{\"id\":\"a\",\"type\":\"gemini\",\"toolCalls\":[{}]}\n"))
	f.Add([]byte(`{"history":[{"role":"user","parts":[{"functionResponse":{}}]}]}`))
	readertest.FuzzDetectRead(f, "fuzz", Detect, Read)
}
