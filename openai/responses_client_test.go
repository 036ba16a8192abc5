package openai

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/testing/clienttest"
	"github.com/compactkit/compact/summarize"
)

const responsesOK = `{
  "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test-2025",
  "output": [
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "private"}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "the "}, {"type": "output_text", "text": "summary"}]}
  ],
  "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000}, "output_tokens": 300, "total_tokens": 1500}
}`

func TestResponsesSendsWireRequest(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Reply(200, responsesOK))
	temp := 0.5
	c, err := NewResponses(Config{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Temperature: &temp,
		Header: http.Header{"Chatgpt-Account-Id": {"acct"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), &baseReq); err != nil {
		t.Fatal(err)
	}
	got := srv.Last(t)
	if got.Method != "POST" || got.Path != "/v1/responses" {
		t.Errorf("%s %s", got.Method, got.Path)
	}
	if got.Header.Get("Authorization") != "Bearer sk-test" || got.Header.Get("Chatgpt-Account-Id") != "acct" {
		t.Errorf("headers %v", got.Header)
	}
	want := map[string]any{
		"model": "m1", "instructions": "be brief", "max_output_tokens": float64(512), "temperature": 0.5,
		"store": false, "stream": false,
		"input": []any{map[string]any{"type": "message", "role": "user",
			"content": []any{map[string]any{"type": "input_text", "text": "summarize this"}}}},
	}
	if !reflect.DeepEqual(got.Body, want) {
		t.Errorf("body\n%v\nwant\n%v", got.Body, want)
	}
}

func TestResponsesAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		text       string
		truncated  bool
		usage      compact.Usage
		err        string // a substring; "" for no error
		provider   bool   // the error is a ProviderError
	}{
		{name: "text and usage", status: 200, body: responsesOK, text: "the summary",
			usage: compact.Usage{Input: 200, CacheRead: 1000, Output: 300, Total: 1500}},
		{name: "cut by the limit", status: 200, truncated: true, text: "the",
			body: `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"the"}]}]}`},
		{name: "content filter", status: 200, err: "content filter",
			body: `{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}`},
		{name: "empty", status: 200, err: "empty summary", body: `{"status":"completed","output":[{"type":"reasoning","summary":[]}]}`},
		{name: "failed", status: 200, err: "openai", provider: true,
			body: `{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`},
		{name: "error status", status: 429, err: "429", provider: true, body: `{"error":{"message":"slow down"}}`},
		{name: "not JSON", status: 200, err: "undecodable", provider: true, body: `<html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := clienttest.NewServer(t, clienttest.Reply(tc.status, tc.body))
			c, err := NewResponses(Config{BaseURL: srv.URL, Model: "m0"})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(context.Background(), &baseReq)
			if tc.err != "" {
				var pe *compact.ProviderError
				if err == nil || !strings.Contains(err.Error(), tc.err) || errors.As(err, &pe) != tc.provider {
					t.Fatalf("err = %v, want one holding %q (provider error %v)", err, tc.err, tc.provider)
				}
				if tc.name == "empty" && !errors.Is(err, ErrEmptySummary) {
					t.Errorf("err = %v, want ErrEmptySummary", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tc.text || resp.Truncated != tc.truncated || resp.Usage != tc.usage {
				t.Errorf("got %q truncated=%v usage %+v", resp.Text, resp.Truncated, resp.Usage)
			}
		})
	}
}

func TestResponsesWithoutSending(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.Reply(200, responsesOK))
	c, err := NewResponses(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	noModel := baseReq
	noModel.Model = ""
	if _, err := c.Complete(context.Background(), &noModel); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("err = %v", err)
	}
	if srv.Hits.Load() != 0 {
		t.Errorf("%d requests sent", srv.Hits.Load())
	}
	if _, err := NewResponses(Config{BaseURL: "ftp://x"}); err == nil {
		t.Error("NewResponses accepted an ftp URL")
	}
}

// TestResponsesConformance runs the checks both API clients pass on the
// Responses client.
func TestResponsesConformance(t *testing.T) {
	tg := clienttest.Target{
		Provider: providerName,
		New: func(t *testing.T, url string, o clienttest.Options) summarize.Completer {
			c, err := NewResponses(Config{BaseURL: url + "/v1", APIKey: o.APIKey, Header: o.Header, Timeout: o.Timeout})
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
		Path: "/v1/responses", KeyHeader: "Authorization", Request: baseReq, Partial: `{"output":[`,
	}
	t.Run("without sending", func(t *testing.T) { clienttest.WithoutSending(t, tg) })
	t.Run("cancelled", func(t *testing.T) { clienttest.Cancelled(t, tg) })
	t.Run("timeout", func(t *testing.T) { clienttest.Timeout(t, tg) })
	t.Run("errors carry no key", func(t *testing.T) { clienttest.ErrorsCarryNoKey(t, tg) })
	t.Run("redirect named", func(t *testing.T) { clienttest.RedirectNamed(t, tg) })
}
