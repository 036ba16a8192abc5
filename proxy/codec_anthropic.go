package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/anthropic"
	"github.com/compactkit/compact/internal/jsontext"
)

// anthropicCodec reads and writes the Messages API.
type anthropicCodec struct{ cache *itemCache }

func (anthropicCodec) api() API { return Anthropic }

// anthropicBlock is what the tool-pairing check (check.go) reads of a
// content block; the mapping onto engine parts is anthropic.Content.
type anthropicBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

// anthropicMessage is one element of "messages".
type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// blocks returns the message's content as blocks; a string content is one
// text block.
func (m *anthropicMessage) blocks() []anthropicBlock {
	c := bytes.TrimSpace(m.Content)
	if len(c) > 0 && c[0] == '"' {
		return []anthropicBlock{{Type: "text"}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(c, &bs)
	return bs
}

func (c anthropicCodec) parse(body []byte) (*Parsed, error) {
	p, ms, err := readList(Anthropic, body, "messages")
	if err != nil {
		return nil, err
	}
	if m := jsontext.Find(ms, "thinking"); m != nil {
		var t struct{ Type string }
		_ = json.Unmarshal(body[m.Value.Start:m.Value.End], &t)
		p.Thinking = t.Type == "enabled" || t.Type == "adaptive"
	}
	if m := jsontext.Find(ms, "metadata"); m != nil {
		var md struct {
			UserID string `json:"user_id"`
		}
		_ = json.Unmarshal(body[m.Value.Start:m.Value.End], &md)
		p.BodySession = claudeSession(md.UserID)
	}
	for i, it := range p.Items {
		in, err := c.cache.read(Anthropic, it, decodeAnthropicItem)
		if err != nil {
			return nil, err
		}
		if in.compaction {
			p.StandDown = "the conversation carries a compaction block"
		}
		p.Units = append(p.Units, Unit{Start: i, End: i + 1, Messages: in.messages(), Digest: in.digest})
		nameResults(p.Units, i)
	}
	return p, nil
}

// decodeAnthropicItem reads one message with the one mapping of the
// Messages API (anthropic.Content): its tool_result blocks become tool
// result messages, the runs of its other blocks messages of its role (a
// role other than assistant reads as user). A message the mapping refuses
// (a block member of the wrong type, which the API would refuse as well)
// still counts: it becomes a user message holding its JSON as text.
func decodeAnthropicItem(raw []byte) (*itemInfo, error) {
	// The members as spans of raw: the content is read in place, not
	// copied first.
	ms, _, err := jsontext.ObjectMembers(raw, jsontext.SkipSpace(raw, 0))
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	var m anthropicMessage
	if r := jsontext.Find(ms, "role"); r != nil {
		if err := json.Unmarshal(raw[r.Value.Start:r.Value.End], &m.Role); err != nil {
			return nil, err
		}
	}
	if c := jsontext.Find(ms, "content"); c != nil {
		m.Content = raw[c.Value.Start:c.Value.End:c.Value.End]
	}
	in := &itemInfo{role: m.Role}
	if bytes.Contains(m.Content, []byte(`"compaction"`)) {
		for _, b := range m.blocks() {
			in.compaction = in.compaction || b.Type == "compaction"
		}
	}
	role := compact.RoleUser
	if m.Role == "assistant" {
		role = compact.RoleAssistant
	}
	msgs, err := anthropic.Content(role, m.Content)
	if err != nil {
		msgs = []*compact.Message{{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText, Text: rawText(raw)}}}}
	}
	in.msgs = msgs
	return in, nil
}

// nameResults sets the ToolName of each tool result message of units[i]
// that answers a call of the unit before it, as the API requires every
// result to: summaries then name the tool whose output they read. The
// messages are the request's own copies (itemInfo.messages).
func nameResults(units []Unit, i int) {
	if i == 0 {
		return
	}
	for _, m := range units[i].Messages {
		if m.Role != compact.RoleToolResult || m.ToolName != "" {
			continue
		}
	prev:
		for _, a := range units[i-1].Messages {
			for j := range a.Content {
				if c := a.Content[j].ToolCall; c != nil && c.ID == m.ToolCallID {
					m.ToolName = c.Name
					break prev
				}
			}
		}
	}
}

// claudeSession extracts the session id from Claude Code's
// metadata.user_id: the legacy "user_<hash>_account_<id>_session_<uuid>"
// string, or a JSON object string with a session_id.
func claudeSession(userID string) string {
	if userID == "" {
		return ""
	}
	if strings.HasPrefix(userID, "{") {
		var v struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(userID), &v) == nil {
			return v.SessionID
		}
		return ""
	}
	if _, s, ok := strings.Cut(userID, "_session_"); ok {
		return s
	}
	return ""
}

func (anthropicCodec) summaryItem(text string) []byte {
	return append(append([]byte(`{"role":"user","content":[{"type":"text","text":`), quote(text)...), `}]}`...)
}

// prepareKept drops the signed thinking blocks that the rewrite
// invalidates. Thinking signatures are bound to what precedes them, which
// the summary replaced; the API only needs the thinking of the turn in
// progress (its assistant messages, when the request ends with tool
// results), so every other kept thinking or redacted_thinking block is
// removed. The ones kept stay byte for byte, and the request then tells the
// API to drop rather than reject a block whose prefix changed
// (thinking.block_binding.prefix_mismatch_behavior = "drop_block").
func (anthropicCodec) prepareKept(p *Parsed, from int) ([][]byte, func([]byte) []byte) {
	items := p.Items[from:]
	out := make([][]byte, len(items))
	copy(out, items)
	// The turn in progress, when the request ends in its tool loop: every
	// assistant message after the last user message that is not made of
	// tool results (with interleaved thinking, each step of the loop has
	// its own block).
	first, active := currentTurn(items)
	inTurn := func(i int) bool { return active && first >= 0 && i >= first }
	keptSigned := false
	for i, it := range items {
		if !bytes.Contains(it, []byte(`thinking"`)) {
			continue
		}
		if inTurn(i) {
			keptSigned = true
			continue
		}
		if stripped, ok := dropThinking(it); ok {
			out[i] = stripped
		}
	}
	if !keptSigned || !p.Thinking {
		return out, nil
	}
	return out, setDropBlock
}

// dropThinking removes thinking and redacted_thinking blocks from an
// assistant message, keeping every other byte. A message left empty gets
// a short text block, since the API refuses empty content.
func dropThinking(item []byte) ([]byte, bool) {
	ms, _, err := jsontext.ObjectMembers(item, jsontext.SkipSpace(item, 0))
	if err != nil {
		return nil, false
	}
	var role string
	if r := jsontext.Find(ms, "role"); r != nil {
		_ = json.Unmarshal(item[r.Value.Start:r.Value.End], &role)
	}
	c := jsontext.Find(ms, "content")
	if role != "assistant" || c == nil || item[c.Value.Start] != '[' {
		return nil, false
	}
	els, _, err := jsontext.ArrayElements(item, c.Value.Start)
	if err != nil {
		return nil, false
	}
	var kept [][]byte
	dropped := false
	for _, e := range els {
		var b struct{ Type string }
		_ = json.Unmarshal(item[e.Start:e.End], &b)
		if b.Type == "thinking" || b.Type == "redacted_thinking" {
			dropped = true
			continue
		}
		kept = append(kept, item[e.Start:e.End])
	}
	if !dropped {
		return nil, false
	}
	if len(kept) == 0 {
		kept = [][]byte{[]byte(`{"type":"text","text":"(reasoning omitted)"}`)}
	}
	out := make([]byte, 0, len(item))
	out = append(out, item[:c.Value.Start]...)
	out = append(out, '[')
	out = append(out, bytes.Join(kept, []byte(","))...)
	out = append(out, ']')
	out = append(out, item[c.Value.End:]...)
	return out, true
}

// bindingBeta is the anthropic-beta value a request needs for the API to
// accept thinking.block_binding (without it: 400 "thinking.<type>.
// block_binding: Extra inputs are not permitted").
const bindingBeta = "thinking-binding-controls-2026-08-01"

// betaCompact enables on-demand compaction: the compaction request field
// and the compaction block sent back first in messages (PROXY.md §1.7,
// §8). anthropicBetas asks for it.
const betaCompact = "compact-2026-09-04"

// opensWithCompaction reports whether a Messages API message's content
// starts with a compaction block.
func opensWithCompaction(item []byte) bool {
	ms, _, err := jsontext.ObjectMembers(item, jsontext.SkipSpace(item, 0))
	if err != nil {
		return false
	}
	c := jsontext.Find(ms, "content")
	if c == nil || item[c.Value.Start] != '[' {
		return false
	}
	els, _, err := jsontext.ArrayElements(item, c.Value.Start)
	if err != nil || len(els) == 0 {
		return false
	}
	typ, _ := jsontext.TopLevelString(item[els[0].Start:els[0].End], "type")
	return typ == "compaction"
}

// anthropicBetas returns the anthropic-beta values a body the proxy built
// needs that the client may not send: bindingBeta when its thinking object
// sets block_binding, betaCompact when it asks for an on-demand compaction
// or its first message opens with a compaction block (see native.go).
func anthropicBetas(body []byte) []string {
	ms, err := jsontext.Object(body)
	if err != nil {
		return nil
	}
	var out []string
	if t := jsontext.Find(ms, "thinking"); t != nil && body[t.Value.Start] == '{' {
		inner, _, err := jsontext.ObjectMembers(body, t.Value.Start)
		if err == nil && jsontext.Find(inner, "block_binding") != nil {
			out = append(out, bindingBeta)
		}
	}
	compaction := jsontext.Find(ms, "compaction") != nil
	if m := jsontext.Find(ms, "messages"); !compaction && m != nil && body[m.Value.Start] == '[' {
		if els, _, err := jsontext.ArrayElements(body, m.Value.Start); err == nil && len(els) > 0 {
			compaction = opensWithCompaction(body[els[0].Start:els[0].End])
		}
	}
	if compaction {
		out = append(out, betaCompact)
	}
	return out
}

// addBetas adds each beta to h's anthropic-beta values unless one of them
// (a comma-separated list) already holds it.
func addBetas(h http.Header, betas []string) {
	for _, b := range betas {
		have := false
		for _, v := range h.Values("Anthropic-Beta") {
			for part := range strings.SplitSeq(v, ",") {
				if strings.TrimSpace(part) == b {
					have = true
				}
			}
		}
		if !have {
			h.Add("Anthropic-Beta", b)
		}
	}
}

// setDropBlock adds block_binding.prefix_mismatch_behavior = "drop_block"
// to the request's thinking object, leaving every other byte as it was.
func setDropBlock(body []byte) []byte {
	ms, err := jsontext.Object(body)
	if err != nil {
		return body
	}
	t := jsontext.Find(ms, "thinking")
	if t == nil || body[t.Value.Start] != '{' {
		return body
	}
	inner, _, err := jsontext.ObjectMembers(body, t.Value.Start)
	if err != nil || jsontext.Find(inner, "block_binding") != nil {
		return body
	}
	const add = `"block_binding":{"prefix_mismatch_behavior":"drop_block"}`
	at := t.Value.End - 1 // the closing brace
	sep := ","
	if len(inner) == 0 {
		sep = ""
	}
	out := make([]byte, 0, len(body)+len(add)+1)
	out = append(out, body[:at]...)
	out = append(out, sep+add...)
	return append(out, body[at:]...)
}

func (anthropicCodec) newObserver(stream bool) observer {
	return newUsageObserver(Anthropic, stream)
}
