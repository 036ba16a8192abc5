package fakeupstream

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// convo is an Anthropic conversation under construction: the request
// fields around the message list, and the messages as sent.
type convo struct {
	system, thinking string
	msgs             []string
}

// body is the Messages request for the conversation so far.
func (c *convo) body(stream bool) string {
	think := ""
	if c.thinking != "" {
		think = `"thinking":` + c.thinking + `,`
	}
	return fmt.Sprintf(`{"model":"claude-x","max_tokens":1024,"stream":%v,"system":%s,%s"tools":[%s],"messages":[%s]}`,
		stream, c.system, think, anthropicBashTool, strings.Join(c.msgs, ","))
}

// reply reads a non-streamed Messages answer: its content blocks as
// sent, and its stop reason.
func reply(t *testing.T, out []byte) ([]json.RawMessage, string) {
	t.Helper()
	var msg struct {
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
	}
	decode(t, string(out), &msg)
	return msg.Content, msg.StopReason
}

// turn posts the conversation, appends the assistant's answer and the
// tool result that answers its call (printing "STEP-n"), and returns the
// answer's blocks.
func (c *convo) turn(t *testing.T, url string, headers ...string) []json.RawMessage {
	t.Helper()
	status, out := postWith(t, url, "/v1/messages", c.body(false), headers...)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	blocks, _ := reply(t, out)
	content, _ := json.Marshal(blocks)
	c.msgs = append(c.msgs, `{"role":"assistant","content":`+string(content)+`}`)
	var use struct {
		ID    string `json:"id"`
		Input struct {
			Command string `json:"command"`
		} `json:"input"`
	}
	decode(t, string(blocks[len(blocks)-1]), &use)
	step := strings.TrimPrefix(strings.Fields(use.Input.Command)[1], "STEP-")
	step = strings.TrimSuffix(step, ";")
	c.msgs = append(c.msgs, fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"STEP-%s\n1\n2"}]}`, use.ID, step))
	return blocks
}

// thinkingHistory runs two turns with thinking on and returns the
// conversation, ready for a third request.
func thinkingHistory(t *testing.T, url, thinking string, headers ...string) *convo {
	t.Helper()
	c := &convo{system: `"You are a test."`, thinking: thinking, msgs: []string{`{"role":"user","content":"go"}`}}
	for i := 0; i < 2; i++ {
		blocks := c.turn(t, url, headers...)
		var first struct {
			Type      string `json:"type"`
			Signature string `json:"signature"`
		}
		decode(t, string(blocks[0]), &first)
		if first.Type != "thinking" || first.Signature == "" {
			t.Fatalf("answer %d does not open with signed thinking: %s", i+1, blocks[0])
		}
	}
	return c
}

func TestThinkingRules(t *testing.T) {
	const enabled = `{"type":"enabled","budget_tokens":1024}`
	const dropBlock = `{"type":"enabled","budget_tokens":1024,"block_binding":{"prefix_mismatch_behavior":"drop_block"}}`
	cases := []struct {
		name     string
		cfg      Config
		thinking string
		edit     func(c *convo)
		headers  []string
		// want is the status; wantErr a part of the error message;
		// verified and dropped the recorded counts.
		want              int
		wantErr           string
		verified, dropped int
	}{
		{name: "unchanged history", edit: func(c *convo) {}, want: 200, verified: 2},
		{name: "cache marker moved and string content as a block",
			edit: func(c *convo) {
				c.msgs[0] = `{"role":"user","content":[{"type":"text","text":"go","cache_control":{"type":"ephemeral"}}]}`
			}, want: 200, verified: 2},
		{name: "earlier tool result shortened",
			edit: func(c *convo) { c.msgs[2] = strings.Replace(c.msgs[2], `\n1\n2`, ``, 1) },
			want: 400, wantErr: "messages.3.content.0: Invalid `signature` in `thinking` block. The block is bound to a different conversation.", verified: 1},
		{name: "prefix changed, drop_block with its beta",
			thinking: dropBlock, headers: []string{"anthropic-beta", "other-beta," + BindingBeta},
			edit: func(c *convo) { c.msgs[2] = strings.Replace(c.msgs[2], `\n1\n2`, ``, 1) },
			want: 200, verified: 1, dropped: 1},
		{name: "drop_block without its beta",
			edit: func(c *convo) { c.thinking = dropBlock },
			want: 400, wantErr: "thinking.enabled.block_binding: Extra inputs are not permitted"},
		{name: "first message changed: every later block invalid, dropped",
			thinking: dropBlock, headers: []string{"anthropic-beta", BindingBeta},
			edit: func(c *convo) { c.msgs[0] = `{"role":"user","content":"go on"}` },
			want: 200, verified: 0, dropped: 2},
		{name: "system changed",
			edit: func(c *convo) { c.system = `"You are another test."` },
			want: 400, wantErr: "The `system` prompt differs from the one this block was created with."},
		{name: "signature altered",
			edit: func(c *convo) { c.msgs[1] = strings.Replace(c.msgs[1], `"signature":"`, `"signature":"AAAA`, 1) },
			want: 400, wantErr: "messages.1.content.0: Invalid `signature` in `thinking` block"},
		{name: "thinking text altered",
			edit: func(c *convo) { c.msgs[3] = strings.Replace(c.msgs[3], `Step 2 is next`, `Step 9 is next`, 1) },
			want: 400, wantErr: "messages.3.content.0: Invalid `signature` in `thinking` block", verified: 1},
		{name: "final assistant of the tool loop without thinking",
			edit: func(c *convo) { c.msgs[3] = withoutThinking(t, c.msgs[3]) },
			want: 400, wantErr: "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.", verified: 1},
		{name: "adaptive thinking may skip it",
			thinking: `{"type":"adaptive"}`, edit: func(c *convo) { c.msgs[3] = withoutThinking(t, c.msgs[3]) },
			want: 200, verified: 1},
		{name: "old account: changed prefix accepted",
			cfg:  Config{OldAccount: true},
			edit: func(c *convo) { c.msgs[2] = strings.Replace(c.msgs[2], `\n1\n2`, ``, 1) },
			want: 200, verified: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, url := Start(t, tc.cfg)
			thinking := tc.thinking
			if thinking == "" {
				thinking = enabled
			}
			c := thinkingHistory(t, url, thinking, tc.headers...)
			tc.edit(c)
			status, out := postWith(t, url, "/v1/messages", c.body(false), tc.headers...)
			if status != tc.want || !strings.Contains(string(out), tc.wantErr) {
				t.Fatalf("status %d, want %d with %q: %s", status, tc.want, tc.wantErr, out)
			}
			reqs := f.Requests()
			last := reqs[len(reqs)-1]
			if status == 400 {
				if !isAnthropicError(t, out) || !last.ThinkingRejected || !last.Rejected {
					t.Errorf("error shape %s, recorded rejected=%v thinking=%v", out, last.Rejected, last.ThinkingRejected)
				}
				if len(f.ThinkingRefusals()) != 1 || len(f.Check(last)) != 1 || !strings.Contains(f.Check(last)[0], tc.wantErr) {
					t.Errorf("ThinkingRefusals = %d, Check = %q", len(f.ThinkingRefusals()), f.Check(last))
				}
			} else if last.ThinkingRejected || len(f.ThinkingRefusals()) != 0 {
				t.Errorf("passing request recorded as refused by the thinking rules")
			}
			if last.ThinkingVerified != tc.verified || last.ThinkingDropped != tc.dropped {
				t.Errorf("verified %d dropped %d, want %d and %d", last.ThinkingVerified, last.ThinkingDropped, tc.verified, tc.dropped)
			}
		})
	}
}

// withoutThinking removes the thinking block of an assistant message.
func withoutThinking(t *testing.T, msg string) string {
	t.Helper()
	var m struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	}
	decode(t, msg, &m)
	out, _ := json.Marshal(map[string]any{"role": m.Role, "content": m.Content[1:]})
	return string(out)
}

// TestThinkingOtherProvider: a block signed by another Fake (another
// provider, or a forged one) is refused even with drop_block.
func TestThinkingOtherProvider(t *testing.T) {
	_, url1 := Start(t, Config{})
	_, url2 := Start(t, Config{})
	c := thinkingHistory(t, url1, `{"type":"enabled","budget_tokens":1024}`)
	status, out := postWith(t, url2, "/v1/messages", c.body(false))
	if status != 400 || !strings.Contains(string(out), "messages.1.content.0: Invalid `signature` in `thinking` block\"") {
		t.Errorf("status %d: %s", status, out)
	}
}

// TestThinkingOff: without a thinking object (or disabled) the answer has
// no thinking block.
func TestThinkingOff(t *testing.T) {
	_, url := Start(t, Config{})
	for _, think := range []string{"", `{"type":"disabled"}`} {
		c := &convo{system: `"s"`, thinking: think, msgs: []string{`{"role":"user","content":"go"}`}}
		blocks, _ := reply(t, postOK(t, url, "/v1/messages", c.body(false)))
		if len(blocks) != 1 || !strings.Contains(string(blocks[0]), `"tool_use"`) {
			t.Errorf("thinking %q: blocks %s", think, blocks)
		}
	}
}

// TestThinkingStreamed: a streamed answer sends the thinking block as
// thinking_delta events and one signature_delta, and the block put
// together from them verifies on the next request.
func TestThinkingStreamed(t *testing.T) {
	f, url := Start(t, Config{})
	c := &convo{system: `[{"type":"text","text":"s"}]`, thinking: `{"type":"adaptive"}`, msgs: []string{`{"role":"user","content":"go"}`}}
	events := parseSSE(t, postOK(t, url, "/v1/messages", c.body(true)))
	var thinking, signature, args, toolID string
	var types []string
	for _, ev := range events {
		var e struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			} `json:"content_block"`
			Delta struct {
				Type        string `json:"type"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		decode(t, ev.data, &e)
		switch e.Type {
		case "content_block_start":
			types = append(types, fmt.Sprintf("%d:%s", e.Index, e.ContentBlock.Type))
			if e.ContentBlock.Type == "tool_use" {
				toolID = e.ContentBlock.ID
			}
		case "content_block_delta":
			switch e.Delta.Type {
			case "thinking_delta":
				thinking += e.Delta.Thinking
			case "signature_delta":
				signature += e.Delta.Signature
			case "input_json_delta":
				args += e.Delta.PartialJSON
			}
		}
	}
	if strings.Join(types, " ") != "0:thinking 1:tool_use" || thinking == "" || signature == "" {
		t.Fatalf("blocks %v thinking %q signature %q", types, thinking, signature)
	}
	think, _ := json.Marshal(ordered{{"type", "thinking"}, {"thinking", thinking}, {"signature", signature}})
	c.msgs = append(c.msgs,
		fmt.Sprintf(`{"role":"assistant","content":[%s,{"type":"tool_use","id":%q,"name":"Bash","input":%s}]}`, think, toolID, args),
		fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"STEP-1"}]}`, toolID))
	postOK(t, url, "/v1/messages", c.body(true))
	if r := f.Requests(); r[1].ThinkingVerified != 1 || r[1].Thinking != "adaptive" {
		t.Errorf("second request: verified %d, thinking %q", r[1].ThinkingVerified, r[1].Thinking)
	}
}
