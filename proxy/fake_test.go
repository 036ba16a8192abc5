package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// seen is one request as the fake upstream received it.
type seen struct {
	Path   string
	Header http.Header
	// Body is the decoded body; Raw the bytes as they arrived.
	Body []byte
	Raw  []byte
}

// fakeUpstream answers the three APIs with a tool call (or plain text for
// tool-less requests such as summaries), reports usage as bytes/4 and
// rejects requests over window tokens with the provider's overflow error.
type fakeUpstream struct {
	t      *testing.T
	srv    *httptest.Server
	window int // 0: no limit
	// gate, when set, holds every tool-less (summary) request until it is
	// closed; summaries counts them.
	gate      chan struct{}
	summaries atomic.Int32
	// hangSummaries makes tool-less (summary) requests wait until the
	// caller gives up.
	hangSummaries bool
	// reject400, when set, refuses the requests it matches with a 400
	// that is not an overflow.
	reject400 func(body []byte) bool
	// echoAuth makes tool-less (summary) requests fail with a 401 whose
	// body quotes the credential.
	echoAuth bool
	stream   bool

	mu   sync.Mutex
	reqs []seen
	// reject, when set, decides per request whether to answer with an
	// overflow error regardless of size.
	reject func(n int, body []byte) bool
}

func newFakeUpstream(t *testing.T) *fakeUpstream {
	f := &fakeUpstream{t: t}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeUpstream) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

// modelRequests are the requests that carried tools (the agent's own, not
// the summarizer's).
func (f *fakeUpstream) modelRequests() []seen {
	var out []seen
	for _, r := range f.requests() {
		if bytes.Contains(r.Body, []byte(`"tools"`)) {
			out = append(out, r)
		}
	}
	return out
}

func tokensOf(body []byte) int { return (len(body) + 3) / 4 }

func (f *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	raw := body
	if enc := r.Header.Get("Content-Encoding"); enc != "" {
		dec, err := decodeAll(enc, body, 64<<20)
		if err != nil {
			f.t.Errorf("upstream got a body it cannot decode as %s: %v", enc, err)
		}
		body = dec
	}
	f.mu.Lock()
	n := len(f.reqs)
	f.reqs = append(f.reqs, seen{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Raw: raw})
	reject := f.reject
	f.mu.Unlock()
	tokens := tokensOf(body)
	over := f.window > 0 && tokens > f.window
	if reject != nil && reject(n, body) {
		over = true
	}
	tools := bytes.Contains(body, []byte(`"tools"`))
	if f.reject400 != nil && f.reject400(body) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":{"message":"Unrecognized request argument supplied: block_binding","type":"invalid_request_error","code":null}}`)
		return
	}
	if !tools {
		f.summaries.Add(1)
		if f.gate != nil {
			<-f.gate
		}
	}
	if !tools && f.hangSummaries {
		<-r.Context().Done()
		return
	}
	if !tools && f.echoAuth {
		// A summary request refused with an error that quotes the
		// credential, as some gateways do.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"invalid key %s%s","type":"authentication_error"}}`, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
		return
	}
	switch r.URL.Path {
	case "/v1/messages":
		if over {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"},"request_id":"req_1"}`, tokens, f.window)
			return
		}
		content := `[{"type":"text","text":"## Goal\nsummary text"}]`
		stop := "end_turn"
		if tools {
			content = fmt.Sprintf(`[{"type":"text","text":"Running step %d."},{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"seq 1 %d"}}]`, n, n, n)
			stop = "tool_use"
		}
		if f.stream && bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_%d\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"stop_reason\":null,\"usage\":{\"input_tokens\":%d,\"output_tokens\":1}}}\n\n", n, tokens)
			fmt.Fprintf(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
			fmt.Fprintf(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n")
			fmt.Fprintf(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
			fmt.Fprintf(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"input_tokens\":%d,\"output_tokens\":20}}\n\n", tokens)
			fmt.Fprintf(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"m","content":%s,"stop_reason":%q,"usage":{"input_tokens":%d,"output_tokens":30}}`, n, content, stop, tokens)
	case "/v1/chat/completions":
		if over {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, f.window, tokens)
			return
		}
		msg := `{"role":"assistant","content":"## Goal\nsummary text"}`
		if tools {
			msg = fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_%d","type":"function","function":{"name":"bash","arguments":"{\"command\":\"seq 1 %d\"}"}}]}`, n, n)
		}
		if f.stream && bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":null}],\"usage\":null}\n\n", n)
			fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n", n)
			fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":5,\"total_tokens\":%d}}\n\n", n, tokens, tokens+5)
			fmt.Fprintf(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c%d","object":"chat.completion","model":"m","choices":[{"index":0,"message":%s,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":%d,"completion_tokens":30,"total_tokens":%d}}`, n, msg, tokens, tokens+30)
	case "/v1/responses":
		if over {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`)
			return
		}
		out := `[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"## Goal\nsummary text","annotations":[]}]}]`
		if tools {
			out = fmt.Sprintf(`[{"type":"function_call","id":"fc_%d","call_id":"call_%d","name":"exec_command","arguments":"{\"cmd\":\"seq 1 %d\"}","status":"completed"}]`, n, n, n)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"resp_%d","object":"response","status":"completed","model":"m","output":%s,"usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":30,"total_tokens":%d}}`, n, out, tokens, tokens+30)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q,"method":%q}`, r.URL.Path, r.Method)
	}
}

func sha(b []byte) string { s := sha256.Sum256(b); return fmt.Sprintf("%x", s[:8]) }

// listOf returns the raw elements of the body's message list.
func listOf(t *testing.T, api API, body []byte) []json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("upstream body is not JSON: %v", err)
	}
	key := "messages"
	if api == Responses {
		key = "input"
	}
	var list []json.RawMessage
	if err := json.Unmarshal(doc[key], &list); err != nil {
		t.Fatalf("upstream %s: %v", key, err)
	}
	return list
}

func isSummaryItem(raw []byte) bool {
	return bytes.Contains(raw, []byte("The earlier part of this conversation was condensed"))
}

func toolOutput(step int) string {
	var b strings.Builder
	for i := 0; b.Len() < 6000; i++ {
		fmt.Fprintf(&b, "step %d line %d: some tool output that fills the window\n", step, i)
	}
	return b.String()
}
