package cline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/compactkit/compact/internal/testing/readertest"
)

// FuzzRead checks that no input makes Read or ReadTask panic, and that
// what they return can be imported.
func FuzzRead(f *testing.F) {
	for _, dir := range []string{"xml-task", "native-task", "roo-task", "real-cline-resume", "real-roo-2025-02"} {
		api, err := os.ReadFile(filepath.Join("testdata", dir, APIHistoryFile))
		if err != nil {
			f.Fatal(err)
		}
		ui, err := os.ReadFile(filepath.Join("testdata", dir, UIMessagesFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(api, ui)
	}
	f.Add([]byte(`[{"role":"user","content":[{"type":"text","text":"[x] Result:"}]}]`), []byte(`[]`))
	f.Add([]byte(`[{"role":"assistant","content":"<a><b>"},{"role":"user","content":[{"type":"text","text":"[a for 'b'] Result:"}]}]`),
		[]byte(`[{"conversationHistoryDeletedRange":[0,5],"conversationHistoryIndex":-9}]`))
	f.Fuzz(func(t *testing.T, api, ui []byte) {
		Detect(api)
		tr, err := ReadTask(api, ui, "fuzz.json")
		if err != nil {
			return
		}
		readertest.Import(t, tr, "fuzz")
	})
}
