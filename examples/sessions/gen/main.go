// Command gen writes examples/sessions/demo.jsonl: a pi (version 3)
// session of a coding agent that finds and fixes a bug in a small Go
// project, then sorts its output and writes a changelog entry.
//
// The session is written from scratch by this program and is the same on
// every run: ids, tool-call ids and timestamps are derived from counters
// and the bank statement the agent reads comes from a seeded generator.
// Provider usage on each assistant message is modelled on how Anthropic
// reports it (cache reads of the previous context, cache writes of the new
// part), with a context of about 2.9 characters per token.
//
// Regenerate the file from the repository root with
//
//	go run ./examples/sessions/gen > examples/sessions/demo.jsonl
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if _, err := os.Stdout.Write(build()); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// Constants of the modelled session.
const (
	provider     = "anthropic"
	model        = "claude-sonnet-4-5"
	api          = "anthropic-messages"
	sessionID    = "5f0c2a9e-3d41-4b7a-9c6e-0a8d17e2b4f3"
	cwd          = "/home/dev/src/ledger"
	systemTokens = 4100 // system prompt and tool schemas, as the provider counts them
	charsPerTok  = 2.9
)

// Wire shapes, with fields in pi's order.
type (
	header struct {
		Type      string `json:"type"`
		Version   int    `json:"version"`
		ID        string `json:"id"`
		Timestamp string `json:"timestamp"`
		Cwd       string `json:"cwd"`
	}
	entryHead struct {
		Type      string  `json:"type"`
		ID        string  `json:"id"`
		ParentID  *string `json:"parentId"`
		Timestamp string  `json:"timestamp"`
	}
	messageEntry struct {
		entryHead
		Message any `json:"message"`
	}
	modelChange struct {
		entryHead
		Provider string `json:"provider"`
		ModelID  string `json:"modelId"`
	}
	thinkingChange struct {
		entryHead
		ThinkingLevel string `json:"thinkingLevel"`
	}
	sessionInfo struct {
		entryHead
		Name string `json:"name"`
	}
	labelEntry struct {
		entryHead
		TargetID string `json:"targetId"`
		Label    string `json:"label"`
	}
	block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		Thinking  string          `json:"thinking,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	userMessage struct {
		Role      string  `json:"role"`
		Content   []block `json:"content"`
		Timestamp int64   `json:"timestamp"`
	}
	cost struct {
		Input      float64 `json:"input"`
		Output     float64 `json:"output"`
		CacheRead  float64 `json:"cacheRead"`
		CacheWrite float64 `json:"cacheWrite"`
		Total      float64 `json:"total"`
	}
	usage struct {
		Input       int  `json:"input"`
		Output      int  `json:"output"`
		CacheRead   int  `json:"cacheRead"`
		CacheWrite  int  `json:"cacheWrite"`
		TotalTokens int  `json:"totalTokens"`
		Cost        cost `json:"cost"`
	}
	assistantMessage struct {
		Role       string  `json:"role"`
		Content    []block `json:"content"`
		API        string  `json:"api"`
		Provider   string  `json:"provider"`
		Model      string  `json:"model"`
		Usage      usage   `json:"usage"`
		StopReason string  `json:"stopReason"`
		Timestamp  int64   `json:"timestamp"`
	}
	toolResult struct {
		Role       string  `json:"role"`
		ToolCallID string  `json:"toolCallId"`
		ToolName   string  `json:"toolName"`
		Content    []block `json:"content"`
		IsError    bool    `json:"isError"`
		Timestamp  int64   `json:"timestamp"`
	}
)

// writer accumulates the session's lines.
type writer struct {
	buf      bytes.Buffer
	n        int       // entries written
	calls    int       // tool calls made
	parent   string    // id of the last entry
	clock    time.Time // time of the next entry
	ctxChars int       // characters of the conversation so far
	cached   int       // provider tokens in the prompt cache
	pending  []string  // ids of tool calls awaiting results
}

func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// hashID derives a random-looking but fixed number from a counter.
func hashID(prefix string, n int) uint32 {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s-%s-%d", sessionID, prefix, n)))
	return binary.BigEndian.Uint32(sum[:4])
}

// head starts a new entry after the previous one.
func (w *writer) head(typ string, advance time.Duration) entryHead {
	w.n++
	w.clock = w.clock.Add(advance)
	id := fmt.Sprintf("%08x", hashID("entry", w.n))
	var parent *string
	if w.parent != "" {
		p := w.parent
		parent = &p
	}
	w.parent = id
	return entryHead{Type: typ, ID: id, ParentID: parent, Timestamp: w.clock.Format("2006-01-02T15:04:05.000Z")}
}

func (w *writer) line(v any) { w.buf.Write(marshal(v)) }

func (w *writer) ms() int64 { return w.clock.UnixMilli() }

func text(s string) []block { return []block{{Type: "text", Text: s}} }

// user writes a user message, minutes after the previous entry.
func (w *writer) user(after time.Duration, s string) {
	h := w.head("message", after)
	w.ctxChars += len(s)
	w.line(messageEntry{h, userMessage{Role: "user", Content: text(s), Timestamp: w.ms()}})
}

// call is a tool call the assistant makes.
type call struct {
	name string
	args any
}

func bash(cmd string) call            { return call{"bash", map[string]any{"command": cmd}} }
func read(path string) call           { return call{"read", map[string]any{"path": path}} }
func write(path, body string) call    { return call{"write", orderedWrite{path, body}} }
func edit(path, old, new string) call { return call{"edit", orderedEdit{path, old, new}} }

type orderedWrite struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type orderedEdit struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// assistant writes an assistant message: optional thinking, optional
// text, then tool calls. Its usage covers the whole context so far.
func (w *writer) assistant(thinking, say string, calls ...call) {
	var content []block
	chars := 0
	if thinking != "" {
		content = append(content, block{Type: "thinking", Thinking: thinking})
		chars += len(thinking)
	}
	if say != "" {
		content = append(content, block{Type: "text", Text: say})
		chars += len(say)
	}
	w.pending = w.pending[:0]
	for _, c := range calls {
		w.calls++
		id := fmt.Sprintf("toolu_01%08x%08x", hashID("call", w.calls), hashID("callx", w.calls))
		args := bytes.TrimRight(marshal(c.args), "\n")
		content = append(content, block{Type: "toolCall", ID: id, Name: c.name, Arguments: args})
		chars += len(c.name) + len(args)
		w.pending = append(w.pending, id)
	}
	prompt := systemTokens + int(float64(w.ctxChars)/charsPerTok)
	out := int(float64(chars)/charsPerTok) + 12
	u := usage{Input: 3, Output: out, CacheRead: w.cached, CacheWrite: prompt - 3 - w.cached}
	if u.CacheWrite < 0 {
		u.CacheWrite = 0
	}
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	u.Cost = cost{
		Input:      round6(float64(u.Input) * 3 / 1e6),
		Output:     round6(float64(u.Output) * 15 / 1e6),
		CacheRead:  round6(float64(u.CacheRead) * 0.3 / 1e6),
		CacheWrite: round6(float64(u.CacheWrite) * 3.75 / 1e6),
	}
	u.Cost.Total = round6(u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite)
	w.cached = u.CacheRead + u.CacheWrite
	stop := "stop"
	if len(calls) > 0 {
		stop = "toolUse"
	}
	h := w.head("message", time.Duration(3+chars/60)*time.Second)
	w.ctxChars += chars
	w.line(messageEntry{h, assistantMessage{Role: "assistant", Content: content, API: api, Provider: provider,
		Model: model, Usage: u, StopReason: stop, Timestamp: w.ms()}})
}

func round6(f float64) float64 {
	return float64(int64(f*1e6+0.5)) / 1e6
}

// result writes the result of the i-th tool call of the last assistant
// message.
func (w *writer) result(i int, tool, out string, isError bool) {
	h := w.head("message", time.Duration(1+len(out)/4000)*time.Second)
	w.ctxChars += len(out)
	w.line(messageEntry{h, toolResult{Role: "toolResult", ToolCallID: w.pending[i], ToolName: tool,
		Content: text(out), IsError: isError, Timestamp: w.ms()}})
}

func build() []byte {
	w := &writer{clock: time.Date(2025, 3, 3, 9, 14, 5, 120e6, time.UTC)}
	w.line(header{Type: "session", Version: 3, ID: sessionID, Timestamp: w.clock.Format("2006-01-02T15:04:05.000Z"), Cwd: cwd})
	w.line(modelChange{w.head("model_change", 0), provider, model})
	w.line(thinkingChange{w.head("thinking_level_change", 0), "medium"})
	script(w)
	return w.buf.Bytes()
}

// lineOf returns the 1-based line of the first line of src containing s.
func lineOf(src, s string) int {
	i := strings.Index(src, s)
	if i < 0 {
		panic("lineOf: not found: " + s)
	}
	return strings.Count(src[:i], "\n") + 1
}

// mustReplace replaces old, which must occur once, in src.
func mustReplace(src, old, new string) string {
	if strings.Count(src, old) != 1 {
		panic("edit text must occur exactly once: " + old)
	}
	return strings.Replace(src, old, new, 1)
}

// editResult is the edit tool's reply.
func editResult(path, old, new string) string {
	return fmt.Sprintf("Edited %s: replaced %d lines with %d lines.", path, strings.Count(old, "\n")+1, strings.Count(new, "\n")+1)
}
