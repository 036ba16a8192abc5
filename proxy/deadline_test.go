package proxy

import (
	"net/http"
	"testing"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize"
)

// TestSummaryTimeoutCoversTheWholeSummary: a model summary is held to
// SummaryTimeout by summarize.Deadline, one limit for all its calls
// together (a split turn's history and prefix), as the command line's
// --total-timeout; each call used to get the whole limit of its own.
func TestSummaryTimeoutCoversTheWholeSummary(t *testing.T) {
	srv, err := New(Config{SummaryTimeout: 42 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	v := &view{p: &Parsed{Model: "claude-sonnet-4-5"}, info: compact.ModelInfo{ID: "claude-sonnet-4-5", ContextWindow: 200000}}
	for _, api := range []API{Anthropic, Chat, Responses} {
		d, ok := srv.summarizerFor(api, http.Header{}, v, nil).(*summarize.Deadline)
		if !ok || d.Limit != 42*time.Second {
			t.Errorf("%v: summarizer %#v, want a summarize.Deadline of 42s", api, d)
		}
	}
}
