package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// thinkingConversation is an Anthropic request with thinking on, where
// every assistant turn starts with a signed thinking block (and one with a
// redacted one), ending in an active tool loop.
func thinkingConversation(steps int) []byte {
	items := []string{`{"role":"user","content":"Fix the failing test."}`}
	for i := 0; i < steps; i++ {
		think := fmt.Sprintf(`{"type":"thinking","thinking":"Step %d: look at the next file.","signature":"sig-%d-AbCd=="}`, i, i)
		if i == 3 {
			think = `{"type":"redacted_thinking","data":"ENCRYPTED-3=="}`
		}
		items = append(items,
			fmt.Sprintf(`{"role":"assistant","content":[%s,{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"cat f%d"}}]}`, think, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, toolOutput(i)))
	}
	return []byte(`{"model":"claude-test","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + strings.Join(items, ",") + `],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`)
}

// TestThinkingKeptValid compacts a conversation with signed thinking and
// checks the rewritten request by the documented rules: pairing holds, the
// assistant message of the tool loop in progress still starts with its
// thinking block, every kept signed block is byte-identical to the
// client's, no other kept thinking block survives (its signature would not
// match the new prefix), and the request asks the API to drop rather than
// reject a block whose prefix changed.
func TestThinkingKeptValid(t *testing.T) {
	body := thinkingConversation(10)
	p, err := codecFor(Anthropic).parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Thinking {
		t.Fatal("thinking not detected")
	}
	for cut := 1; cut < len(p.Units); cut++ {
		if p.Units[cut].Messages[0].Role == compact.RoleToolResult {
			continue // the planner never cuts before a tool result
		}
		cp := &Checkpoint{Covered: cut, Item: codecFor(Anthropic).summaryItem("summary")}
		out := splice(codecFor(Anthropic), p, cp)
		if err := validateBody(Anthropic, out); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		var doc struct {
			Thinking json.RawMessage `json:"thinking"`
			Messages []struct {
				Role    string            `json:"role"`
				Content []json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		last := len(doc.Messages) - 2 // the assistant message of the active loop
		for i, m := range doc.Messages {
			for j, blk := range m.Content {
				isThinking := bytes.Contains(blk, []byte(`"type":"thinking"`)) || bytes.Contains(blk, []byte(`"type":"redacted_thinking"`))
				if !isThinking {
					continue
				}
				if i != last {
					t.Errorf("cut %d: message %d keeps a thinking block its new prefix invalidates", cut, i)
				}
				if j != 0 {
					t.Errorf("cut %d: thinking block not first in message %d", cut, i)
				}
				if !bytes.Contains(body, blk) {
					t.Errorf("cut %d: kept thinking block changed: %s", cut, blk)
				}
			}
		}
		if first := doc.Messages[last].Content[0]; !bytes.Contains(first, []byte(`thinking"`)) {
			t.Errorf("cut %d: the active tool loop's assistant message does not start with its thinking block", cut)
		}
		if !bytes.Contains(doc.Thinking, []byte(`"prefix_mismatch_behavior":"drop_block"`)) || !bytes.Contains(doc.Thinking, []byte(`"budget_tokens":1024`)) {
			t.Errorf("cut %d: thinking config %s", cut, doc.Thinking)
		}
	}
}

// TestNoCompactionWhenTheEnvelopeFillsTheTrigger: when the system prompt
// and tools alone pass the trigger, no summary can help, so the proxy does
// not rewrite (and re-cache) the history on every request; requests still
// under the window go through as they are.
func TestNoCompactionWhenTheEnvelopeFillsTheTrigger(t *testing.T) {
	up := newFakeUpstream(t)
	_, ts := newTestProxy(t, up, Config{Window: 20000, Policy: compact.Reserve{Tokens: 3000}, Summarizer: SummarizerExtractive})
	c := newClient(t, Chat, ts.URL)
	// A system prompt of ~17,500 tokens: over the 17,000-token trigger.
	c.items[0] = `{"role":"system","content":` + fmt.Sprintf("%q", strings.Repeat("You are careful. ", 4100)) + `}`
	c.outBytes = 400
	for i := 1; i <= 8; i++ {
		c.step(i)
	}
	for k, r := range up.modelRequests() {
		if tokensOf(r.Body) > 20000 {
			t.Fatalf("request %d over the window: the test needs a different size", k)
		}
		for _, it := range listOf(t, Chat, r.Body) {
			if isSummaryItem(it) {
				t.Fatalf("request %d was compacted though no summary can bring it under the trigger", k)
			}
		}
	}
}
