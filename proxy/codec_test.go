package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// splicedList rebuilds a body from its parsed items: the bytes before the
// list, the items joined by commas, the bytes after.
func splicedList(p *Parsed) []byte {
	var b bytes.Buffer
	b.Write(p.Body[:p.ListStart+1])
	b.Write(bytes.Join(p.Items, []byte(",")))
	b.Write(p.Body[p.ListEnd-1:])
	return b.Bytes()
}

// checkParsed asserts the invariants every codec keeps: items are exact
// subslices of the body in order, units partition the items after the head,
// and re-joining the items gives a body that parses to the same items.
func checkParsed(t *testing.T, api API, body []byte, p *Parsed) {
	t.Helper()
	if len(p.Items) == 0 {
		return
	}
	at := p.ListStart
	for i, it := range p.Items {
		j := bytes.Index(body[at:], it)
		if j < 0 {
			t.Fatalf("item %d is not in the body after the previous one", i)
		}
		at += j + len(it)
		if !json.Valid(it) {
			t.Fatalf("item %d is not valid JSON: %s", i, it)
		}
	}
	next := p.Head
	for _, u := range p.Units {
		if u.Start != next || u.End <= u.Start || len(u.Messages) == 0 {
			t.Fatalf("units do not partition the items: %+v at %d", u, next)
		}
		next = u.End
	}
	if next != len(p.Items) {
		t.Fatalf("units end at %d of %d items", next, len(p.Items))
	}
	again, err := codecFor(api).parse(splicedList(p))
	if err != nil {
		t.Fatalf("re-joined body does not parse: %v", err)
	}
	if len(again.Items) != len(p.Items) {
		t.Fatalf("re-joined body has %d items, want %d", len(again.Items), len(p.Items))
	}
	for i := range p.Items {
		if !bytes.Equal(again.Items[i], p.Items[i]) {
			t.Fatalf("item %d changed after re-joining", i)
		}
	}
}

func TestParseKeepsExactBytes(t *testing.T) {
	cases := []struct {
		api  API
		body string
		head int
	}{
		{Anthropic, "{ \"model\" : \"claude-x\",\n \"messages\" : [\n  {\"role\":\"user\",\"content\":\"a \\\"quoted\\\" \\\\ word\"} ,\n{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"]}{\"},{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{\"command\":\"ls\"}}]},{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":\"x\"},{\"type\":\"text\",\"text\":\"more\"}]} ] , \"stream\":true}", 0},
		{Chat, `{"messages":[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null,"reasoning_content":"think","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"out"}],"model":"gpt-x"}`, 2},
		{Responses, `{"model":"gpt-x","instructions":"be good","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"perm"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"task"}]},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA=="},{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},{"type":"function_call","call_id":"c2","name":"exec_command","arguments":"{\"cmd\":\"pwd\"}"},{"type":"function_call_output","call_id":"c1","output":"a"},{"type":"function_call_output","call_id":"c2","output":"b"},{"type":"item_reference","id":"x"}]}`, 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.api), func(t *testing.T) {
			p, err := codecFor(tc.api).parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if p.Head != tc.head {
				t.Errorf("head %d, want %d", p.Head, tc.head)
			}
			checkParsed(t, tc.api, []byte(tc.body), p)
		})
	}
	// The Responses turn (reasoning + two parallel calls) is one unit, so
	// no cut separates a call from its sibling or its reasoning.
	p, _ := codecFor(Responses).parse([]byte(cases[2].body))
	if u := p.Units[1]; u.Start != 2 || u.End != 5 {
		t.Errorf("reasoning and parallel calls not one unit: %+v", u)
	}
}

func TestDigestIgnoresMovingBreakpoints(t *testing.T) {
	same := [][]string{
		{`{"role":"user","content":"fix it"}`, `{"role":"user","content":[{"type":"text","text":"fix it","cache_control":{"type":"ephemeral"}}]}`, `{"role":"user","content":[{"type":"text","text":"fix it"}]}`},
		{`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}`, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x","cache_control":{"type":"ephemeral","ttl":"5m"}}]}`, `{"role":"user","content":[{"cache_control":{"type":"ephemeral"},"type":"tool_result","tool_use_id":"t","content":"x"}]}`},
	}
	for _, group := range same {
		want := itemDigest([]byte(group[0]))
		for _, it := range group[1:] {
			if itemDigest([]byte(it)) != want {
				t.Errorf("%s hashes differently from %s", it, group[0])
			}
		}
	}
	if itemDigest([]byte(`{"role":"user","content":"fix it"}`)) == itemDigest([]byte(`{"role":"user","content":"fix that"}`)) {
		t.Error("different messages hash the same")
	}
}

// TestObserverAnyChunking feeds realistic streams split at every byte
// position and checks the usage read is always the same.
func TestObserverAnyChunking(t *testing.T) {
	streams := []struct {
		api    API
		stream string
		want   [4]int // input, output, cache read, cache write
	}{
		{Anthropic, "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":500,\"cache_creation_input_tokens\":7,\"output_tokens\":1}}}\r\n\r\nevent: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"h\u00e9llo \u4e16\u754c\"}}\r\n\r\nevent: message_delta\r\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":42}}\r\n\r\nevent: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n", [4]int{10, 42, 500, 7}},
		{Chat, "data: {\"choices\":[{\"delta\":{\"content\":\"\u00e9\"}}],\"usage\":null}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":9,\"prompt_tokens_details\":{\"cached_tokens\":100}}}\n\ndata: [DONE]\n\n", [4]int{20, 9, 100, 0}},
		{Responses, "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0}\n\nevent: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":300,\"output_tokens\":12,\"input_tokens_details\":{\"cached_tokens\":256}}}}\n\n", [4]int{44, 12, 256, 0}},
	}
	for _, tc := range streams {
		for cut := 0; cut <= len(tc.stream); cut++ {
			o := codecFor(tc.api).newObserver(true)
			o.Write([]byte(tc.stream[:cut]))
			o.Write([]byte(tc.stream[cut:]))
			got := o.Observed()
			if got.Usage == nil || !got.Complete {
				t.Fatalf("%s cut %d: usage %v complete %v", tc.api, cut, got.Usage, got.Complete)
			}
			u := got.Usage
			if [4]int{u.Input, u.Output, u.CacheRead, u.CacheWrite} != tc.want {
				t.Fatalf("%s cut %d: usage %+v, want %v", tc.api, cut, *u, tc.want)
			}
		}
		// One byte at a time.
		o := codecFor(tc.api).newObserver(true)
		for i := 0; i < len(tc.stream); i++ {
			o.Write([]byte{tc.stream[i]})
		}
		if got := o.Observed(); got.Usage == nil {
			t.Errorf("%s byte by byte: no usage", tc.api)
		}
	}
}

func TestObserverInStreamOverflow(t *testing.T) {
	o := codecFor(Anthropic).newObserver(true)
	o.Write([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}\n\n"))
	if got := o.Observed(); !got.Overflow || got.ErrorBody == "" {
		t.Errorf("anthropic in-stream overflow not seen: %+v", got)
	}
	o = codecFor(Anthropic).newObserver(true)
	o.Write([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	if got := o.Observed(); got.Overflow || got.ErrorBody == "" {
		t.Errorf("overloaded counted as overflow: %+v", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(`{"messages":[{"role":"user","content":"hi"}]}`)
	f.Add(`{"input":[{"type":"function_call","call_id":"a","arguments":"{}"},{"type":"function_call_output","call_id":"a","output":"x"}]}`)
	f.Add(`{"messages":[{"role":"system","content":"s"},{"role":"tool","tool_call_id":"x","content":[{"type":"text","text":"y"}]}]}`)
	f.Add(`{"messages":[{"role":"user","content":[{"type":"text","text":"a\"]","cache_control":{"type":"ephemeral"}}]}]} `)
	f.Add(`{"input":"just text"}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, api := range []API{Anthropic, Chat, Responses} {
			p, err := codecFor(api).parse([]byte(body))
			if err != nil {
				continue
			}
			if !json.Valid([]byte(body)) {
				// The scanner is lenient about some invalid JSON; the items
				// it returns must still be where it says.
				for _, it := range p.Items {
					if !strings.Contains(body, string(it)) {
						t.Fatalf("%s: item not in body", api)
					}
				}
				continue
			}
			checkParsed(t, api, []byte(body), p)
			_ = validateBody(api, []byte(body))
		}
	})
}

// TestObserverErrorIsTheErrorOnly: a failed response whose output quotes
// an overflow message is not an overflow; its error object decides.
func TestObserverErrorIsTheErrorOnly(t *testing.T) {
	o := codecFor(Responses).newObserver(true)
	o.Write([]byte("event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"the log said context_length_exceeded\"}]}],\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n"))
	if got := o.Observed(); got.Overflow || !strings.Contains(got.ErrorBody, "server_error") {
		t.Errorf("got %+v", got)
	}
	o = codecFor(Responses).newObserver(true)
	o.Write([]byte("event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"}}}\n\n"))
	if got := o.Observed(); !got.Overflow {
		t.Errorf("overflow not seen: %+v", got)
	}
}

// FuzzObserver feeds arbitrary responses to every observer, whole and cut
// in two: it must never panic, and a stream must read the same either way.
func FuzzObserver(f *testing.F) {
	f.Add("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3}}}\n\n", 10)
	f.Add("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\r\n\r\ndata: [DONE]\r\n\r\n", 3)
	f.Add("event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"context_length_exceeded\"}}}\n\n", 40)
	f.Add("{\"usage\":{\"input_tokens\":5}}", 2)
	f.Fuzz(func(t *testing.T, body string, cut int) {
		if cut < 0 {
			cut = -cut
		}
		if len(body) > 0 {
			cut %= len(body) + 1
		} else {
			cut = 0
		}
		for _, api := range []API{Anthropic, Chat, Responses} {
			for _, stream := range []bool{true, false} {
				whole := codecFor(api).newObserver(stream)
				whole.Write([]byte(body))
				a := whole.Observed()
				split := codecFor(api).newObserver(stream)
				split.Write([]byte(body[:cut]))
				split.Write([]byte(body[cut:]))
				b := split.Observed()
				if stream && (a.Complete != b.Complete || a.Overflow != b.Overflow || (a.Usage == nil) != (b.Usage == nil) || (a.Usage != nil && *a.Usage != *b.Usage)) {
					t.Fatalf("%s: whole %+v, split at %d %+v", api, a, cut, b)
				}
			}
		}
	})
}

// TestStandDown: the proxy leaves alone the conversations whose client
// manages the context itself, but not Claude Code's thinking-only edits.
func TestStandDown(t *testing.T) {
	for _, tc := range []struct {
		api  API
		body string
		down bool
	}{
		{Anthropic, `{"messages":[],"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}}`, false},
		{Anthropic, `{"messages":[],"context_management":{"edits":[{"type":"clear_tool_uses_20250919"}]}}`, true},
		{Anthropic, `{"messages":[],"context_management":{"edits":[{"type":"compact_20260112"}]}}`, true},
		{Anthropic, `{"messages":[],"compaction":{"type":"summarize"}}`, true},
		{Anthropic, `{"messages":[{"role":"user","content":[{"type":"compaction","content":"s","encrypted_content":"x"}]}]}`, true},
		{Responses, `{"input":[{"type":"compaction","encrypted_content":"x"}]}`, true},
		{Responses, `{"input":[],"context_management":[{"type":"compaction","compact_threshold":1000}]}`, true},
		{Chat, `{"messages":[{"role":"user","content":"hi"}]}`, false},
	} {
		p, err := codecFor(tc.api).parse([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if (p.StandDown != "") != tc.down {
			t.Errorf("%s: stand down %q, want %v", tc.body, p.StandDown, tc.down)
		}
	}
}

// TestDefaultPolicy: the default trigger leaves 16,384 tokens (a fifth of
// small windows) under the window, and under the input limit of models
// that have one.
func TestDefaultPolicy(t *testing.T) {
	srv, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]int{
		"claude-sonnet-4-5": 200000 - 16384,
		"gpt-5.1":           272000 - 16384,
	} {
		info, ok := srv.modelInfo("", model)
		if !ok {
			t.Fatalf("%s: window unknown", model)
		}
		if got, _ := srv.policyFor(info).Threshold(info); got != want {
			t.Errorf("%s: threshold %d, want %d", model, got, want)
		}
	}
	small := compact.ModelInfo{ID: "local", ContextWindow: 20000}
	if got, _ := srv.policyFor(small).Threshold(small); got != 16000 {
		t.Errorf("20k window: threshold %d, want 16000", got)
	}
}
