package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/proxy/store"
)

// thinkingConversation is an Anthropic request with thinking on: a first
// turn of tool calls that ended with a text answer, then a second turn in
// progress (the request ends with tool results). Every assistant step
// starts with a signed thinking block (one with a redacted one).
func thinkingConversation() []byte {
	items := []string{`{"role":"user","content":"Fix the failing test."}`}
	step := func(i int) {
		think := fmt.Sprintf(`{"type":"thinking","thinking":"Step %d: look at the next file.","signature":"sig-%d-AbCd=="}`, i, i)
		if i == 3 || i == 8 {
			think = fmt.Sprintf(`{"type":"redacted_thinking","data":"ENCRYPTED-%d=="}`, i)
		}
		items = append(items,
			fmt.Sprintf(`{"role":"assistant","content":[%s,{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"cat f%d"}}]}`, think, i, i),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":%q}]}`, i, toolOutput(i)))
	}
	for i := 0; i < 5; i++ {
		step(i)
	}
	items = append(items, `{"role":"assistant","content":[{"type":"thinking","thinking":"Done.","signature":"sig-end"},{"type":"text","text":"Fixed."}]}`,
		`{"role":"user","content":"Now add a test for it."}`)
	for i := 5; i < 11; i++ {
		step(i)
	}
	return []byte(`{"model":"claude-test","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + strings.Join(items, ",") + `],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`)
}

// TestThinkingKeptValid cuts a conversation with signed thinking at every
// possible point and checks the rewritten request by the documented rules:
// it validates (pairing; the turn in progress opens with its thinking), the
// turn in progress keeps every thinking block byte for byte, no block of an
// earlier turn survives (its signature would not match the new prefix),
// and the request asks the API to drop rather than reject a block whose
// prefix changed.
func TestThinkingKeptValid(t *testing.T) {
	body := thinkingConversation()
	p, err := codecFor(Anthropic).parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Thinking {
		t.Fatal("thinking not detected")
	}
	cuts := 0
	for cut := 1; cut < len(p.Units); cut++ {
		if p.Units[cut].Messages[0].Role == compact.RoleToolResult {
			continue // the planner never cuts before a tool result
		}
		cuts++
		cp := &store.Checkpoint{Covered: cut, Item: codecFor(Anthropic).summaryItem("summary")}
		out := splice(codecFor(Anthropic), p, cp)
		if err := validateBody(Anthropic, out); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		var doc struct {
			Thinking json.RawMessage `json:"thinking"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		// The turn in progress starts after "Now add a test for it." (or at
		// the start of the kept part when the cut fell inside it).
		turnStart := 1
		for i, m := range doc.Messages {
			if bytes.Contains(m.Content, []byte("Now add a test")) {
				turnStart = i + 1
			}
		}
		kept := 0
		for i, m := range doc.Messages {
			var blocks []json.RawMessage
			_ = json.Unmarshal(m.Content, &blocks)
			for j, blk := range blocks {
				if !bytes.Contains(blk, []byte(`thinking"`)) {
					continue
				}
				kept++
				if i < turnStart {
					t.Errorf("cut %d: message %d of an ended turn keeps a thinking block", cut, i)
				}
				if j != 0 {
					t.Errorf("cut %d: thinking block not first in message %d", cut, i)
				}
				if !bytes.Contains(body, blk) {
					t.Errorf("cut %d: kept thinking block changed: %s", cut, blk)
				}
			}
			if i >= turnStart && m.Role == "assistant" && (len(blocks) == 0 || !bytes.Contains(blocks[0], []byte(`thinking"`))) {
				t.Errorf("cut %d: assistant message %d of the turn in progress lost its thinking", cut, i)
			}
		}
		if kept > 0 && !bytes.Contains(doc.Thinking, []byte(`"prefix_mismatch_behavior":"drop_block"`)) {
			t.Errorf("cut %d: thinking blocks kept but no drop_block: %s", cut, doc.Thinking)
		}
		if !bytes.Contains(doc.Thinking, []byte(`"budget_tokens":1024`)) {
			t.Errorf("cut %d: thinking config lost: %s", cut, doc.Thinking)
		}
	}
	if cuts < 10 {
		t.Fatalf("only %d cuts tried", cuts)
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
		if summaryOf(t, Chat, r.Body) != "" {
			t.Fatalf("request %d was compacted though no summary can bring it under the trigger", k)
		}
	}
}

// TestThinkingTurnWithTrailingSystem: a mid-conversation system message at
// the end of the list (Claude Code appends one at times) does not end the
// turn in progress: the kept messages, thinking included, are the same
// bytes with and without it, so the prefix the cache holds stays stable.
func TestThinkingTurnWithTrailingSystem(t *testing.T) {
	body := thinkingConversation()
	withSystem := bytes.Replace(body, []byte(`],"tools"`), []byte(`,{"role":"system","content":"Reminder: keep going."}],"tools"`), 1)
	p, err := codecFor(Anthropic).parse(body)
	if err != nil {
		t.Fatal(err)
	}
	q, err := codecFor(Anthropic).parse(withSystem)
	if err != nil {
		t.Fatal(err)
	}
	cut := len(p.Units) - 3
	for p.Units[cut].Messages[0].Role == compact.RoleToolResult {
		cut--
	}
	cp := &store.Checkpoint{Covered: cut, Item: codecFor(Anthropic).summaryItem("summary")}
	a, b := splice(codecFor(Anthropic), p, cp), splice(codecFor(Anthropic), q, cp)
	want := a[:bytes.LastIndex(a, []byte(`],"tools"`))]
	if !bytes.HasPrefix(b, want) {
		t.Fatalf("the trailing system message changed the kept messages (%d bytes without it, %d with; they part at byte %d)", len(a), len(b), commonPrefix(a, b))
	}
	if !bytes.Contains(want, []byte(`"signature":"sig-10-AbCd=="`)) {
		t.Fatal("the turn in progress lost its thinking")
	}
}

// TestDropBlockBeta: a rewrite that sets thinking.block_binding needs the
// thinking-binding-controls beta, added to the client's own values once.
func TestDropBlockBeta(t *testing.T) {
	p, err := codecFor(Anthropic).parse(thinkingConversation())
	if err != nil {
		t.Fatal(err)
	}
	cut := len(p.Units) - 3
	for p.Units[cut].Messages[0].Role == compact.RoleToolResult {
		cut--
	}
	out := splice(codecFor(Anthropic), p, &store.Checkpoint{Covered: cut, Item: codecFor(Anthropic).summaryItem("summary")})
	betas := anthropicBetas(out)
	if len(betas) != 1 || betas[0] != bindingBeta {
		t.Fatalf("betas of a drop_block rewrite: %v", betas)
	}
	if got := anthropicBetas(thinkingConversation()); got != nil {
		t.Errorf("the client's own body needs no beta: %v", got)
	}
	h := http.Header{}
	h.Set("Anthropic-Beta", "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14")
	addBetas(h, betas)
	addBetas(h, betas)
	if got := strings.Join(h.Values("Anthropic-Beta"), ","); got != "interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14,"+bindingBeta {
		t.Errorf("anthropic-beta = %q", got)
	}
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
