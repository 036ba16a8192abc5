package fakeupstream_test

import (
	"context"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/testing/fakeupstream"
	"github.com/compactkit/compact/openai"
	"github.com/compactkit/compact/summarize"
)

// The project's own provider clients read the fake's non-streamed answers
// and classify its overflow errors as context overflows, so the fake can
// stand in for a summarizer model too.
func TestProjectClients(t *testing.T) {
	newClients := map[string]func(base string) (summarize.Completer, error){
		"anthropic": func(base string) (summarize.Completer, error) {
			return anthropic.New(anthropic.Config{BaseURL: base, APIKey: "sk-test", Model: "claude-x"})
		},
		"openai": func(base string) (summarize.Completer, error) {
			return openai.New(openai.Config{BaseURL: base + "/v1", APIKey: "sk-test", Model: "gpt-x"})
		},
	}
	for name, newClient := range newClients {
		t.Run(name, func(t *testing.T) {
			f, base := fakeupstream.Start(t, fakeupstream.Config{Window: 200})
			c, err := newClient(base)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(context.Background(), &summarize.Request{System: "s", Prompt: "Write a summary.", MaxTokens: 100})
			if err != nil {
				t.Fatal(err)
			}
			r := f.Requests()[0]
			if resp.Text != fakeupstream.SummaryText || resp.Truncated || resp.Usage.Input != r.Tokens || resp.Usage.Output < 1 {
				t.Errorf("response %+v, want the summary text and %d input tokens", resp, r.Tokens)
			}
			_, err = c.Complete(context.Background(), &summarize.Request{Prompt: string(make([]byte, 2000)), MaxTokens: 100})
			if err == nil || !compact.IsContextOverflow(err) {
				t.Errorf("over the window: error %v, want a context overflow", err)
			}
		})
	}
}
