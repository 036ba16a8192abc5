package fakeupstream

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// compactBody is the conversation's request with the on-demand
// compaction field.
func compactBody(c *convo, extra string) string {
	b := c.body(false)
	return strings.Replace(b, `"max_tokens":1024,`, `"max_tokens":1024,"compaction":{"type":"summarize"},`+extra, 1)
}

// compacted returns a conversation whose history is the compaction of
// c's first n messages followed by c's messages from n on.
func compacted(c *convo, block json.RawMessage, n int) *convo {
	out := &convo{system: c.system, thinking: c.thinking}
	out.msgs = append([]string{`{"role":"user","content":[` + string(block) + `]}`}, c.msgs[n:]...)
	return out
}

func TestAnthropicCompaction(t *testing.T) {
	const key, beta = "k1", CompactBeta
	f, url := Start(t, Config{})
	c := thinkingHistory(t, url, `{"type":"enabled","budget_tokens":1024}`, "x-api-key", key)
	// Compact the first three messages (the user's request, the first
	// call and its result); the second call and its result are kept.
	head := &convo{system: c.system, thinking: c.thinking, msgs: c.msgs[:3]}
	status, out := postWith(t, url, "/v1/messages", compactBody(head, ""), "x-api-key", key, "anthropic-beta", beta)
	if status != 200 {
		t.Fatalf("compaction: status %d: %s", status, out)
	}
	blocks, stop := reply(t, out)
	var cb struct {
		Type             string `json:"type"`
		Content          string `json:"content"`
		EncryptedContent string `json:"encrypted_content"`
	}
	if len(blocks) != 1 {
		t.Fatalf("compaction answer: %s", out)
	}
	decode(t, string(blocks[0]), &cb)
	if stop != "compaction" || cb.Type != "compaction" || !strings.Contains(cb.Content, HandoverMark) || cb.EncryptedContent == "" ||
		strings.Contains(cb.EncryptedContent, "STEP") {
		t.Fatalf("compaction answer: stop %q block %s", stop, blocks[0])
	}
	if r := f.Requests(); !r[len(r)-1].Compaction || !r[len(r)-1].Summary {
		t.Errorf("compaction not recorded as one")
	}
	block := blocks[0]
	tampered := json.RawMessage(strings.Replace(string(block), cb.EncryptedContent[:8], "AAAAAAAA", 1))

	cases := []struct {
		name     string
		body     string
		headers  []string
		want     int
		wantErr  string
		verified int
	}{
		{"kept turn's thinking stays valid", compacted(c, block, 3).body(false), []string{"x-api-key", key, "anthropic-beta", beta}, 200, "", 1},
		{"compaction without the beta", compactBody(head, ""), []string{"x-api-key", key}, 400, errCompactionBeta, 0},
		{"combined with context_management", compactBody(head, `"context_management":{"edits":[]},`), []string{"x-api-key", key, "anthropic-beta", beta}, 400, errCompactionWithCM, 0},
		{"ending with an unanswered tool call", compactBody(&convo{system: c.system, thinking: c.thinking, msgs: c.msgs[:4]}, ""),
			[]string{"x-api-key", key, "anthropic-beta", beta}, 400, "messages.3: a compaction request cannot end with", 0},
		{"block sent back without the beta", compacted(c, block, 3).body(false), []string{"x-api-key", key}, 400, "messages.0.content.0.type: Input tag 'compaction'", 0},
		{"block not first", (&convo{system: c.system, thinking: c.thinking, msgs: append([]string{`{"role":"user","content":"go"}`}, compacted(c, block, 3).msgs...)}).body(false),
			[]string{"x-api-key", key, "anthropic-beta", beta}, 400, "messages.1.content.0: a `compaction` block must be the first block", 0},
		{"another credential", compacted(c, block, 3).body(false), []string{"x-api-key", "k2", "anthropic-beta", beta}, 400, "messages.0.content.0: Invalid `encrypted_content` in `compaction` block", 0},
		{"altered blob", compacted(c, tampered, 3).body(false), []string{"x-api-key", key, "anthropic-beta", beta}, 400, "Invalid `encrypted_content`", 0},
		{"kept turns that do not follow the summarized messages", (&convo{system: c.system, thinking: c.thinking,
			msgs: append([]string{compacted(c, block, 3).msgs[0], `{"role":"user","content":"an inserted message"}`}, c.msgs[3:]...)}).body(false),
			[]string{"x-api-key", key, "anthropic-beta", beta},
			400, "messages.2.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation.", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := postWith(t, url, "/v1/messages", tc.body, tc.headers...)
			if status != tc.want || !strings.Contains(string(out), tc.wantErr) {
				t.Fatalf("status %d, want %d with %q: %s", status, tc.want, tc.wantErr, out)
			}
			r := f.Requests()
			last := r[len(r)-1]
			if last.ThinkingVerified != tc.verified {
				t.Errorf("verified %d, want %d", last.ThinkingVerified, tc.verified)
			}
			if status == 200 && last.Step != 3 {
				t.Errorf("the script did not carry on after the compaction: step %d", last.Step)
			}
			if status == 400 && !isAnthropicError(t, out) {
				t.Errorf("error shape %s", out)
			}
		})
	}
}

// TestAnthropicCompactionStreamed: the block arrives as one
// compaction_delta carrying content and encrypted_content, and the
// message stops with "compaction".
func TestAnthropicCompactionStreamed(t *testing.T) {
	_, url := Start(t, Config{})
	c := &convo{system: `"s"`, msgs: []string{`{"role":"user","content":"go"}`}}
	body := strings.Replace(c.body(true), `"max_tokens":1024,`, `"max_tokens":1024,"compaction":{"type":"summarize"},`, 1)
	status, out := postWith(t, url, "/v1/messages", body, "anthropic-beta", CompactBeta)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	var kinds []string
	var content, blob, stop string
	for _, ev := range parseSSE(t, out) {
		var e struct {
			Type         string `json:"type"`
			ContentBlock struct {
				Type string `json:"type"`
			} `json:"content_block"`
			Delta struct {
				Type             string `json:"type"`
				Content          string `json:"content"`
				EncryptedContent string `json:"encrypted_content"`
				StopReason       string `json:"stop_reason"`
			} `json:"delta"`
		}
		decode(t, ev.data, &e)
		switch e.Type {
		case "content_block_start":
			kinds = append(kinds, e.ContentBlock.Type)
		case "content_block_delta":
			kinds = append(kinds, e.Delta.Type)
			content, blob = e.Delta.Content, e.Delta.EncryptedContent
		case "message_delta":
			stop = e.Delta.StopReason
		}
	}
	if strings.Join(kinds, " ") != "compaction compaction_delta" || !strings.Contains(content, HandoverMark) || blob == "" || stop != "compaction" {
		t.Errorf("events %v content %q blob %q stop %q", kinds, content, blob, stop)
	}
}

func TestResponsesCompact(t *testing.T) {
	f, url := Start(t, Config{})
	input := `[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},` +
		`{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c1","output":"STEP-3\n1"}]`
	status, out := postWith(t, url, "/v1/responses/compact", `{"model":"gpt-x","instructions":"i","tools":[`+codexExecTool+`],"input":`+input+`}`,
		"Authorization", "Bearer k1")
	if status != 200 {
		t.Fatalf("compact: status %d: %s", status, out)
	}
	var resp struct {
		Object string            `json:"object"`
		Output []json.RawMessage `json:"output"`
		Usage  struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	decode(t, string(out), &resp)
	if resp.Object != "response.compaction" || len(resp.Output) != 2 || !strings.Contains(string(resp.Output[0]), `"role":"user"`) ||
		!strings.Contains(string(resp.Output[1]), `"type":"compaction"`) || resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Fatalf("compact answer %s", out)
	}
	if r := f.Requests()[0]; !r.Compaction || !r.Summary || r.API != Responses {
		t.Errorf("recorded %+v", r)
	}
	window, _ := json.Marshal(resp.Output)
	next := `{"model":"gpt-x","tools":[` + codexExecTool + `],"input":` + string(window) + `}`
	var item struct {
		EncryptedContent string `json:"encrypted_content"`
	}
	decode(t, string(resp.Output[1]), &item)
	cases := []struct {
		name    string
		path    string
		body    string
		key     string
		want    int
		wantErr string
	}{
		{"next request with the same credential", "/v1/responses", next, "k1", 200, ""},
		{"another credential", "/v1/responses", next, "k2", 400, "could not be verified."},
		{"altered item", "/v1/responses", strings.Replace(next, item.EncryptedContent[:8], "AAAAAAAA", 1), "k1", 400, "could not be verified."},
		{"compacting it again elsewhere", "/v1/responses/compact", next, "k2", 400, "could not be verified."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := postWith(t, url, tc.path, tc.body, "Authorization", "Bearer "+tc.key)
			if status != tc.want || !strings.Contains(string(out), tc.wantErr) {
				t.Fatalf("status %d, want %d with %q: %s", status, tc.want, tc.wantErr, out)
			}
			r := f.Requests()
			last := r[len(r)-1]
			if status == 200 && last.Step != 4 {
				t.Errorf("the script did not carry on after the compaction: step %d", last.Step)
			}
			if status == 400 {
				var e struct {
					Error struct {
						Message string  `json:"message"`
						Type    string  `json:"type"`
						Param   *string `json:"param"`
						Code    string  `json:"code"`
					} `json:"error"`
				}
				decode(t, string(out), &e)
				if e.Error.Type != "invalid_request_error" || e.Error.Code != "invalid_encrypted_content" || e.Error.Param != nil ||
					!strings.HasPrefix(e.Error.Message, "The encrypted content ") || strings.Contains(e.Error.Message, item.EncryptedContent) {
					t.Errorf("error shape %s", out)
				}
			}
		})
	}
}

// TestLatency: a summary request takes SummaryLatency, a streamed turn
// at least TurnLatency's first byte and stream time. Only lower bounds
// are checked; speed targets are benchmarks.
func TestLatency(t *testing.T) {
	cfg := Config{
		TurnLatency:    Latency{FirstByte: 30 * time.Millisecond, Stream: 60 * time.Millisecond},
		SummaryLatency: Latency{FirstByte: 150 * time.Millisecond},
	}
	f, url := Start(t, cfg)
	cases := []struct {
		name    string
		body    string
		atLeast time.Duration
		summary bool
	}{
		{"streamed turn", anthropicBody(true), 85 * time.Millisecond, false},
		{"non-streamed turn", anthropicBody(false), 85 * time.Millisecond, false},
		{"compact's summary prompt", `{"model":"m","messages":[{"role":"user","content":"Summarize.\n<transcript>\n[user]\ngo\n</transcript>"}]}`, 150 * time.Millisecond, true},
	}
	for i, c := range cases {
		start := time.Now()
		postOK(t, url, "/v1/messages", c.body)
		if d := time.Since(start); d < c.atLeast {
			t.Errorf("%s: answered in %v, want at least %v", c.name, d, c.atLeast)
		}
		if r := f.Requests()[i]; r.Summary != c.summary {
			t.Errorf("%s: Summary = %v", c.name, r.Summary)
		}
	}
	if n := len(f.Summaries()); n != 1 {
		t.Errorf("Summaries = %d", n)
	}
}
