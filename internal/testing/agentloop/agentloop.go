// Package agentloop plays a coding agent for tests: one conversation
// over one provider API (Anthropic Messages, OpenAI Chat Completions or
// Responses), streamed or not, with extended thinking on where the API
// has it, for as many tool turns as asked. Like Claude Code, Codex and
// opencode it keeps the whole history and sends it again on every turn,
// echoes the model's blocks back byte for byte in meaning (thinking with
// its signature, tool calls with their ids), answers each shell call
// with the output the command would print, and marks its prompt cache
// the way Claude Code does (the system prompt and the newest message).
//
// It is meant to run against fakeupstream's scripted model, directly or
// through the proxy, and measures what a user would feel: how long each
// turn took.
package agentloop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// API names a wire format, as fakeupstream does.
type API string

// The three APIs.
const (
	Anthropic API = "anthropic"
	Chat      API = "chat"
	Responses API = "responses"
)

// Options describe the agent. Zero fields take the defaults in brackets.
type Options struct {
	API API
	// BaseURL is where requests go: a proxy or the fake itself (no
	// trailing /v1).
	BaseURL string
	// Turns is how many tool turns to run [40]; the loop stops early
	// when the model answers without a tool call.
	Turns int
	// Stream asks for streamed answers.
	Stream bool
	// Thinking turns extended thinking on (Anthropic only): "adaptive"
	// as Claude Code sends it, or "enabled" with a budget [off].
	Thinking string
	// Session names the conversation in the header each agent sends
	// (X-Claude-Code-Session-Id, session_id) ["agentloop"].
	Session string
	// Key is the credential sent [sk-agentloop-0123456789].
	Key string
	// Model is the model asked for ["claude-test" or "gpt-test"].
	Model string
	// Task is the first user message.
	Task string
	// Client sends the requests [http.DefaultClient].
	Client *http.Client
	// Between, when set, is called after each turn with its number
	// (from 1), before the next request: a test can advance a clock or
	// wait there.
	Between func(turn int)
}

// Turn is one request of the loop.
type Turn struct {
	// Latency is from sending the request to the end of the answer.
	Latency time.Duration
	// Status is the HTTP status; Error the body of a failed answer.
	Status int
	Error  string
}

// Result is a finished loop.
type Result struct {
	Turns []Turn
	// Final is the model's last text answer, "" when the loop ran out of
	// turns first.
	Final string
}

// Latencies returns every turn's latency, in order.
func (r Result) Latencies() []time.Duration {
	out := make([]time.Duration, len(r.Turns))
	for i, t := range r.Turns {
		out[i] = t.Latency
	}
	return out
}

// Percentile returns the p-th percentile of ds by nearest rank (the
// smallest value at least p % of ds do not exceed), 0 for none.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(min(len(s)-1, (len(s)*p+99)/100-1), 0)]
}

func (o *Options) defaults() {
	if o.Turns <= 0 {
		o.Turns = 40
	}
	if o.Session == "" {
		o.Session = "agentloop"
	}
	if o.Key == "" {
		o.Key = "sk-agentloop-0123456789"
	}
	if o.Model == "" {
		o.Model = "gpt-test"
		if o.API == Anthropic {
			o.Model = "claude-test"
		}
	}
	if o.Task == "" {
		o.Task = "Run the numbered steps one at a time and report when they are done."
	}
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
}

// Run plays the conversation until the model stops calling tools or the
// turns run out. A failed request ends the loop with an error that says
// which turn and what came back; the turns so far are returned with it.
func Run(ctx context.Context, o Options) (Result, error) {
	o.defaults()
	var res Result
	var items []string
	switch o.API {
	case Anthropic:
		items = []string{userText(o.Task)}
	case Chat:
		items = []string{`{"role":"system","content":"You are a careful coding agent."}`, `{"role":"user","content":` + quote(o.Task) + `}`}
	case Responses:
		items = []string{`{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are a careful coding agent."}]}`,
			`{"type":"message","role":"user","content":[{"type":"input_text","text":` + quote(o.Task) + `}]}`}
	default:
		return res, fmt.Errorf("agentloop: unknown API %q", o.API)
	}
	for turn := 1; turn <= o.Turns; turn++ {
		body := o.body(items)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.BaseURL+o.path(), bytes.NewReader(body))
		if err != nil {
			return res, err
		}
		o.headers(req.Header)
		start := time.Now()
		resp, err := o.Client.Do(req)
		if err != nil {
			return res, fmt.Errorf("turn %d: %w", turn, err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		t := Turn{Latency: time.Since(start), Status: resp.StatusCode}
		if err != nil {
			return res, fmt.Errorf("turn %d: reading the answer: %w", turn, err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Error = string(raw)
			res.Turns = append(res.Turns, t)
			return res, fmt.Errorf("turn %d: HTTP %d: %.300s", turn, resp.StatusCode, raw)
		}
		res.Turns = append(res.Turns, t)
		ans, err := o.parse(raw, isStream(resp))
		if err != nil {
			return res, fmt.Errorf("turn %d: %w", turn, err)
		}
		items = append(items, ans.items...)
		if ans.callID == "" {
			res.Final = ans.text
			return res, nil
		}
		items = append(items, o.toolResult(ans.callID, run(ans.command)))
		if o.Between != nil {
			o.Between(turn)
		}
	}
	return res, nil
}

func (o *Options) path() string {
	switch o.API {
	case Anthropic:
		return "/v1/messages"
	case Chat:
		return "/v1/chat/completions"
	}
	return "/v1/responses"
}

// headers sets what the agent sends besides its body: its name as real
// agents send it (the proxy's live view shows it), its credential and its
// session.
func (o *Options) headers(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "agentloop/1 (compact test agent)")
	switch o.API {
	case Anthropic:
		h.Set("X-Api-Key", o.Key)
		h.Set("Anthropic-Version", "2023-06-01")
		h.Set("X-Claude-Code-Session-Id", o.Session)
	default:
		h.Set("Authorization", "Bearer "+o.Key)
		h.Set("Session_id", o.Session)
	}
}

// body is the request: the whole history, the shell tool, and for
// Anthropic cache breakpoints on the system prompt and on the newest
// message's last block (the history's end moves every turn).
func (o *Options) body(items []string) []byte {
	stream := strconv.FormatBool(o.Stream)
	switch o.API {
	case Anthropic:
		list := append([]string(nil), items...)
		list[len(list)-1] = withCacheMark(list[len(list)-1])
		thinking := ""
		maxTokens := 4096
		switch o.Thinking {
		case "adaptive":
			thinking = `,"thinking":{"type":"adaptive"}`
		case "enabled":
			thinking = `,"thinking":{"type":"enabled","budget_tokens":1024}`
		}
		return []byte(`{"model":` + quote(o.Model) + `,"max_tokens":` + strconv.Itoa(maxTokens) +
			`,"system":[{"type":"text","text":"You are a careful coding agent.","cache_control":{"type":"ephemeral"}}]` +
			`,"messages":[` + strings.Join(list, ",") + `],"tools":[{"name":"Bash","description":"Run a shell command.","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]` +
			thinking + `,"stream":` + stream + `}`)
	case Chat:
		opts := ""
		if o.Stream {
			opts = `,"stream_options":{"include_usage":true}`
		}
		return []byte(`{"model":` + quote(o.Model) + `,"messages":[` + strings.Join(items, ",") +
			`],"tools":[{"type":"function","function":{"name":"bash","description":"Run a shell command.","parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}],"stream":` + stream + opts + `}`)
	}
	return []byte(`{"model":` + quote(o.Model) + `,"instructions":"You are Codex.","input":[` + strings.Join(items, ",") +
		`],"tools":[{"type":"function","name":"exec_command","description":"Run a shell command.","parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}],"store":false,"stream":` + stream +
		`,"prompt_cache_key":` + quote(o.Session) + `}`)
}

// withCacheMark adds a cache_control breakpoint to a message's last
// content block, in place: every other byte stays as it was, as Claude
// Code does (the proxy and the provider both ignore the marker when they
// compare prefixes).
func withCacheMark(item string) string {
	if !strings.HasSuffix(item, "}]}") {
		return item
	}
	return item[:len(item)-3] + `,"cache_control":{"type":"ephemeral"}}]}`
}

func (o *Options) toolResult(id, output string) string {
	switch o.API {
	case Anthropic:
		return `{"role":"user","content":[{"type":"tool_result","tool_use_id":` + quote(id) + `,"content":` + quote(output) + `}]}`
	case Chat:
		return `{"role":"tool","tool_call_id":` + quote(id) + `,"content":` + quote(output) + `}`
	}
	return `{"type":"function_call_output","call_id":` + quote(id) + `,"output":` + quote(output) + `}`
}

// answer is what one model reply adds to the history, and the shell call
// it asks for (callID "" when it asks for none).
type answer struct {
	items   []string
	text    string
	callID  string
	command string
}

func isStream(resp *http.Response) bool {
	return strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
}

func (o *Options) parse(raw []byte, stream bool) (answer, error) {
	switch o.API {
	case Anthropic:
		if stream {
			return anthropicStream(raw)
		}
		var m struct {
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return answer{}, fmt.Errorf("anthropic answer: %w", err)
		}
		return anthropicAnswer(m.Content)
	case Chat:
		if stream {
			return chatStream(raw)
		}
		var m struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || len(m.Choices) == 0 {
			return answer{}, fmt.Errorf("chat answer without a choice: %.200s", raw)
		}
		return chatAnswer(m.Choices[0].Message)
	}
	if stream {
		var out answer
		err := events(raw, func(_ string, data []byte) error {
			var e struct {
				Type     string          `json:"type"`
				Response json.RawMessage `json:"response"`
			}
			if json.Unmarshal(data, &e) == nil && e.Type == "response.completed" {
				a, err := responsesAnswer(e.Response)
				out = a
				return err
			}
			return nil
		})
		if err == nil && out.items == nil {
			err = fmt.Errorf("responses stream without response.completed")
		}
		return out, err
	}
	return responsesAnswer(raw)
}

func anthropicAnswer(blocks []json.RawMessage) (answer, error) {
	var a answer
	for _, b := range blocks {
		var v struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Text  string `json:"text"`
			Input struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return a, fmt.Errorf("anthropic block: %w", err)
		}
		switch v.Type {
		case "tool_use":
			a.callID, a.command = v.ID, v.Input.Command
		case "text":
			a.text += v.Text
		}
	}
	content, _ := json.Marshal(blocks)
	a.items = []string{`{"role":"assistant","content":` + string(content) + `}`}
	return a, nil
}

// anthropicStream puts the content blocks of a streamed answer back
// together from their start events and deltas.
func anthropicStream(raw []byte) (answer, error) {
	type block struct {
		start   map[string]any
		text    strings.Builder
		think   strings.Builder
		sig     string
		partial strings.Builder
	}
	var blocks []*block
	err := events(raw, func(_ string, data []byte) error {
		var e struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock map[string]any `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Thinking    string `json:"thinking"`
				Signature   string `json:"signature"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("anthropic event: %w", err)
		}
		switch e.Type {
		case "error":
			return fmt.Errorf("anthropic stream error: %s", e.Error)
		case "content_block_start":
			for len(blocks) <= e.Index {
				blocks = append(blocks, &block{})
			}
			blocks[e.Index].start = e.ContentBlock
		case "content_block_delta":
			if e.Index >= len(blocks) {
				return fmt.Errorf("delta for block %d before its start", e.Index)
			}
			b := blocks[e.Index]
			switch e.Delta.Type {
			case "text_delta":
				b.text.WriteString(e.Delta.Text)
			case "thinking_delta":
				b.think.WriteString(e.Delta.Thinking)
			case "signature_delta":
				b.sig += e.Delta.Signature
			case "input_json_delta":
				b.partial.WriteString(e.Delta.PartialJSON)
			}
		}
		return nil
	})
	if err != nil {
		return answer{}, err
	}
	var out []json.RawMessage
	for _, b := range blocks {
		m := b.start
		if m == nil {
			continue
		}
		switch m["type"] {
		case "text":
			m["text"] = fmt.Sprint(m["text"]) + b.text.String()
		case "thinking":
			m["thinking"] = fmt.Sprint(m["thinking"]) + b.think.String()
			if b.sig != "" {
				m["signature"] = b.sig
			}
		case "tool_use":
			if b.partial.Len() > 0 {
				var in any
				if err := json.Unmarshal([]byte(b.partial.String()), &in); err != nil {
					return answer{}, fmt.Errorf("tool_use input: %w", err)
				}
				m["input"] = in
			}
		}
		raw, err := json.Marshal(m)
		if err != nil {
			return answer{}, err
		}
		out = append(out, raw)
	}
	return anthropicAnswer(out)
}

func chatAnswer(msg json.RawMessage) (answer, error) {
	var m struct {
		Content   *string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return answer{}, fmt.Errorf("chat message: %w", err)
	}
	a := answer{items: []string{string(msg)}}
	if m.Content != nil {
		a.text = *m.Content
	}
	if len(m.ToolCalls) > 0 {
		a.callID = m.ToolCalls[0].ID
		a.command = commandOf(m.ToolCalls[0].Function.Arguments)
	}
	return a, nil
}

// chatStream puts a streamed Chat answer's message back together.
func chatStream(raw []byte) (answer, error) {
	msg, err := ChatMessage(raw)
	if err != nil {
		return answer{}, err
	}
	return chatAnswer(msg)
}

// ErrTruncated is returned for a stream that ended before its end marker
// (Chat's "data: [DONE]"): the answer is incomplete, and a client would
// send the request again.
var ErrTruncated = errors.New("agentloop: the stream ended before its end marker")

// ChatMessage puts the assistant message of a streamed Chat Completions
// answer back together from its chunks: the text, and each tool call's
// id, name and arguments. A stream without "data: [DONE]" is
// ErrTruncated.
func ChatMessage(raw []byte) ([]byte, error) {
	var text strings.Builder
	type call struct{ id, name, args string }
	var calls []*call
	done := false
	err := events(raw, func(_ string, data []byte) error {
		if string(data) == "[DONE]" {
			done = true
			return nil
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("chat chunk %.200s: %w", data, err)
		}
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, &call{})
				}
				k := calls[tc.Index]
				k.id += tc.ID
				k.name += tc.Function.Name
				k.args += tc.Function.Arguments
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !done {
		return nil, ErrTruncated
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if text.Len() > 0 || len(calls) == 0 {
		msg["content"] = text.String()
	}
	if len(calls) > 0 {
		var tcs []map[string]any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c.id, "type": "function", "function": map[string]string{"name": c.name, "arguments": c.args}})
		}
		msg["tool_calls"] = tcs
	}
	return json.Marshal(msg)
}

func responsesAnswer(raw []byte) (answer, error) {
	var r struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return answer{}, fmt.Errorf("responses answer: %w", err)
	}
	var a answer
	for _, it := range r.Output {
		var v struct {
			Type      string `json:"type"`
			CallID    string `json:"call_id"`
			Arguments string `json:"arguments"`
			Content   []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(it, &v); err != nil {
			return a, fmt.Errorf("responses item: %w", err)
		}
		switch v.Type {
		case "function_call":
			a.callID, a.command = v.CallID, commandOf(v.Arguments)
		case "message":
			for _, c := range v.Content {
				a.text += c.Text
			}
		}
		a.items = append(a.items, string(it))
	}
	if a.items == nil {
		a.items = []string{}
	}
	return a, nil
}

// commandOf reads the shell command out of a call's JSON arguments
// ("command" or "cmd").
func commandOf(args string) string {
	var v struct {
		Command string `json:"command"`
		Cmd     string `json:"cmd"`
	}
	_ = json.Unmarshal([]byte(args), &v)
	if v.Command != "" {
		return v.Command
	}
	return v.Cmd
}

// events calls fn with each server-sent event's name and data.
func events(raw []byte, fn func(event string, data []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			if err := fn(event, []byte(strings.TrimSpace(line[len("data:"):]))); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// stepCommand is the fake model's default command: "echo STEP-n; seq 1 N".
var stepCommand = regexp.MustCompile(`^echo (STEP-\d+); seq 1 (\d+)$`)

// run returns what a shell would print for the command.
func run(cmd string) string {
	m := stepCommand.FindStringSubmatch(strings.TrimSpace(cmd))
	if m == nil {
		return "ok\n"
	}
	n, _ := strconv.Atoi(m[2])
	var b strings.Builder
	b.WriteString(m[1] + "\n")
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

func userText(s string) string {
	return `{"role":"user","content":[{"type":"text","text":` + quote(s) + `}]}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
