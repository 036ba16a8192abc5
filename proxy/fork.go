package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/compactkit/compact/internal/jsontext"
)

// A fork is a summary request made on the conversation itself (see
// summarize.Options.Conversation and rider): the request as the proxy sends
// it upstream, cut after the summarized span, plus one closing user
// message, with the tools not callable, a non-streamed answer and an output
// limit sized for the summary. Everything the provider caches (system,
// tools, thinking settings, the messages up to the cut) keeps its bytes;
// only members after the cache's reach change.

// thinkingRoom is the output added for reasoning when the request lets
// the model decide how long it thinks (Anthropic adaptive thinking, an
// OpenAI reasoning effort), on top of the summary's own budget.
const thinkingRoom = 16384

// member is a top-level member a fork sets: its key and its JSON value.
type member struct {
	key   string
	value []byte
}

// forkList returns body with its list (p.ListStart..p.ListEnd) made of
// items and then closing (none when nil), every byte outside the list as
// in body.
func forkList(p *Parsed, body []byte, items [][]byte, closing []byte) []byte {
	out := make([]byte, 0, len(body)+len(closing)+16)
	out = append(out, body[:p.ListStart+1]...)
	if closing != nil {
		items = append(items[:len(items):len(items)], closing)
	}
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	out = append(out, ']')
	return append(out, body[p.ListEnd:]...)
}

// editMembers returns the JSON object body with the members named in drop
// removed and those in set given their new values (in place when the key
// is there, appended at the end otherwise). Every other member keeps its
// bytes and its place.
func editMembers(body []byte, set []member, drop ...string) ([]byte, error) {
	ms, err := jsontext.Object(body)
	if err != nil {
		return nil, fmt.Errorf("proxy: fork: %w", err)
	}
	open := jsontext.SkipSpace(body, 0) + 1
	closeAt := bytes.LastIndexByte(body, '}')
	out := make([]byte, 0, len(body)+64)
	out = append(out, body[:open]...)
	n := 0
	add := func(b ...[]byte) {
		if n > 0 {
			out = append(out, ',')
		}
		n++
		for _, x := range b {
			out = append(out, x...)
		}
	}
	done := map[string]bool{}
	for _, m := range ms {
		if contains(drop, m.Key) {
			continue
		}
		if v, ok := valueOf(set, m.Key); ok && !done[m.Key] {
			done[m.Key] = true
			add(body[m.All.Start:m.Value.Start], v)
			continue
		}
		add(body[m.All.Start:m.All.End])
	}
	for _, s := range set {
		if !done[s.key] {
			done[s.key] = true
			k, _ := json.Marshal(s.key)
			add(k, []byte{':'}, s.value)
		}
	}
	return append(out, body[closeAt:]...), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func valueOf(set []member, key string) ([]byte, bool) {
	for _, s := range set {
		if s.key == key {
			return s.value, true
		}
	}
	return nil, false
}

// topLevel returns the value of body's top-level member key, nil when
// there is none.
func topLevel(body []byte, key string) []byte {
	ms, err := jsontext.Object(body)
	if err != nil {
		return nil
	}
	if m := jsontext.Find(ms, key); m != nil {
		return body[m.Value.Start:m.Value.End]
	}
	return nil
}

// errForkUnsupported is returned when a request cannot be forked: no list
// to extend.
var errForkUnsupported = errors.New("proxy: the request has no message list to extend")

// fork builds the fork of an Anthropic request: the closing instruction a
// user text block (with a cache breakpoint when the request has fewer
// than the API's four, so that the provider looks the prefix up in its
// cache), tool_choice {"type":"none"} (allowed with thinking, unlike a
// forced tool), max_tokens the summary's budget plus the thinking budget
// (the API wants max_tokens above budget_tokens) or thinkingRoom with
// adaptive thinking, and no stream.
func (anthropicCodec) fork(p *Parsed, body []byte, items [][]byte, instruction string, maxTokens int) ([]byte, int, error) {
	if p.ListEnd == 0 {
		return nil, 0, errForkUnsupported
	}
	block := append([]byte(`{"type":"text","text":`), quote(instruction)...)
	if n := bytes.Count(body[:p.ListStart], []byte(`"cache_control"`)) + bytes.Count(body[p.ListEnd:], []byte(`"cache_control"`)) +
		countIn(items, `"cache_control"`); n < 4 {
		block = append(block, `,"cache_control":{"type":"ephemeral"}`...)
	}
	closing := append(append([]byte(`{"role":"user","content":[`), block...), `}]}`...)
	out := maxTokens
	if raw := topLevel(body, "thinking"); raw != nil {
		var t struct {
			Type   string `json:"type"`
			Budget int    `json:"budget_tokens"`
		}
		_ = json.Unmarshal(raw, &t)
		switch t.Type {
		case "enabled":
			out += t.Budget
		case "adaptive":
			out += thinkingRoom
		}
	}
	set := []member{{"max_tokens", []byte(fmt.Sprint(out))}}
	if topLevel(body, "tools") != nil {
		set = append(set, member{"tool_choice", []byte(`{"type":"none"}`)})
	}
	b, err := editMembers(forkList(p, body, items, closing), set, "stream")
	return b, out, err
}

// fork builds the fork of a Chat Completions request: the closing
// instruction a user message, tool_choice "none", the output limit in the
// field the client uses (max_tokens, else max_completion_tokens, with
// thinkingRoom more for a reasoning effort), and no stream or
// stream_options (which the API allows only on a stream).
func (chatCodec) fork(p *Parsed, body []byte, items [][]byte, instruction string, maxTokens int) ([]byte, int, error) {
	if p.ListEnd == 0 {
		return nil, 0, errForkUnsupported
	}
	closing := append(append([]byte(`{"role":"user","content":`), quote(instruction)...), '}')
	out := maxTokens
	if topLevel(body, "reasoning_effort") != nil {
		out += thinkingRoom
	}
	field := "max_completion_tokens"
	if topLevel(body, "max_tokens") != nil && topLevel(body, field) == nil {
		field = "max_tokens"
	}
	set := []member{{field, []byte(fmt.Sprint(out))}}
	if topLevel(body, "tools") != nil {
		set = append(set, member{"tool_choice", []byte(`"none"`)})
	}
	b, err := editMembers(forkList(p, body, items, closing), set, "stream", "stream_options")
	return b, out, err
}

// fork builds the fork of a Responses request: the closing instruction a
// user message item, tool_choice "none", max_output_tokens (with
// thinkingRoom more when the request sets reasoning), and no stream.
func (responsesCodec) fork(p *Parsed, body []byte, items [][]byte, instruction string, maxTokens int) ([]byte, int, error) {
	if p.ListEnd == 0 {
		return nil, 0, errForkUnsupported
	}
	closing := append(append([]byte(`{"type":"message","role":"user","content":[{"type":"input_text","text":`), quote(instruction)...), `}]}`...)
	out := maxTokens
	if topLevel(body, "reasoning") != nil {
		out += thinkingRoom
	}
	set := []member{{"max_output_tokens", []byte(fmt.Sprint(out))}}
	if topLevel(body, "tools") != nil {
		set = append(set, member{"tool_choice", []byte(`"none"`)})
	}
	b, err := editMembers(forkList(p, body, items, closing), set, "stream", "stream_options")
	return b, out, err
}

// countIn counts the occurrences of s in items.
func countIn(items [][]byte, s string) int {
	n := 0
	for _, it := range items {
		n += bytes.Count(it, []byte(s))
	}
	return n
}
