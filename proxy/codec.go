package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsontext"
)

// codecFor returns the codec of an API, without a cache.
func codecFor(a API) codec { return cachedCodec(a, nil) }

// cachedCodec returns the codec of an API that finds decoded items in c.
func cachedCodec(a API, c *itemCache) codec {
	switch a {
	case Anthropic:
		return anthropicCodec{c}
	case Responses:
		return responsesCodec{c}
	}
	return chatCodec{c}
}

// Messages returns the engine messages the proxy reads from a request
// body of the given API, in order: what it measures and what it would
// summarize. The system prompt is not among them (Anthropic's top-level
// system, the system and developer messages opening a Chat or Responses
// list): the proxy keeps it as sent. The body is read exactly as the proxy
// reads a request, without its cache; the error is the one a request would
// get (a body that is not a JSON object, a list that is not an array).
//
// It lets tools and tests compare what the proxy sees of a conversation
// with what the agent readers see of the same messages
// (e2e/doors_anthropic_test.go).
func Messages(api API, body []byte) ([]*compact.Message, error) {
	switch api {
	case Anthropic, Chat, Responses:
	default:
		return nil, fmt.Errorf("proxy: unknown API %q", api)
	}
	p, err := codecFor(api).parse(body)
	if err != nil {
		return nil, fmt.Errorf("proxy: read %s body: %w", api, err)
	}
	var out []*compact.Message
	for _, u := range p.Units {
		out = append(out, u.Messages...)
	}
	return out, nil
}

// readList reads the envelope shared by the three formats: the top-level
// object, its model and stream members, and the list under listKey as
// exact spans. A missing list, or one that is not an array (Responses'
// string input), gives a Parsed with no items.
func readList(api API, body []byte, listKey string) (*Parsed, []jsontext.Member, error) {
	ms, err := jsontext.Object(body)
	if err != nil {
		return nil, nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Parsed{API: api, Body: body}
	if m := jsontext.Find(ms, "model"); m != nil {
		_ = json.Unmarshal(body[m.Value.Start:m.Value.End], &p.Model)
	}
	if m := jsontext.Find(ms, "stream"); m != nil {
		p.Stream = bytes.Equal(body[m.Value.Start:m.Value.End], []byte("true"))
	}
	if m := jsontext.Find(ms, "prompt_cache_key"); m != nil {
		_ = json.Unmarshal(body[m.Value.Start:m.Value.End], &p.BodySession)
	}
	if m := jsontext.Find(ms, "context_management"); m != nil && managesHistory(body[m.Value.Start:m.Value.End]) {
		p.StandDown = "the client uses context_management"
	}
	if jsontext.Find(ms, "compaction") != nil {
		p.StandDown = "the client asks for compaction itself"
	}
	m := jsontext.Find(ms, listKey)
	if m == nil || body[m.Value.Start] != '[' {
		return p, ms, nil
	}
	els, _, err := jsontext.ArrayElements(body, m.Value.Start)
	if err != nil {
		return nil, nil, fmt.Errorf("proxy: %w", err)
	}
	p.ListStart, p.ListEnd = m.Value.Start, m.Value.End
	p.Items = make([][]byte, len(els))
	for i, e := range els {
		p.Items[i] = body[e.Start:e.End:e.End]
	}
	return p, ms, nil
}

// quote encodes s as a JSON string without HTML escaping (the summary
// holds <summary> tags that should stay readable on the wire).
func quote(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// rawText renders raw JSON as text for a message the proxy does not model.
func rawText(b []byte) string {
	const max = 4000
	if len(b) > max {
		return string(b[:max]) + fmt.Sprintf("... (%d more bytes)", len(b)-max)
	}
	return string(b)
}

// textOf returns a content value that is either a JSON string or an array
// of blocks with "text" members, as text.
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	var blocks []struct {
		Type   string          `json:"type"`
		Text   string          `json:"text"`
		Output json.RawMessage `json:"output"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return rawText(raw)
	}
	var b bytes.Buffer
	for _, blk := range blocks {
		if blk.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(blk.Text)
		}
	}
	return b.String()
}

// managesHistory reports whether a context_management value asks the
// provider to edit or compact the history itself, in which case the proxy
// stands down. Edits that only clear thinking blocks (Claude Code sends
// clear_thinking with keep "all" on every request) leave the history to
// the client, and so to the proxy.
func managesHistory(raw []byte) bool {
	var cm struct {
		Edits []struct {
			Type string `json:"type"`
		} `json:"edits"`
	}
	if json.Unmarshal(raw, &cm) != nil {
		return true
	}
	for _, e := range cm.Edits {
		if !strings.HasPrefix(e.Type, "clear_thinking") {
			return true
		}
	}
	return false
}
