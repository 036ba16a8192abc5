package session

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"sort"

	"github.com/compactkit/compact"
)

// object writes a JSON object with its keys in the order added, the way
// pi's JSON.stringify output has them: no HTML escaping.
type object struct {
	buf bytes.Buffer
	n   int
	err error
}

func (o *object) raw(key string, v []byte) { o.rawKeyed(quote(key), v) }

// rawKeyed adds a member whose name is given already quoted.
func (o *object) rawKeyed(quotedKey, v []byte) {
	if o.n == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	o.n++
	o.buf.Write(quotedKey)
	o.buf.WriteByte(':')
	o.buf.Write(v)
}

func (o *object) val(key string, v any) {
	b, err := marshal(v)
	if err != nil && o.err == nil {
		o.err = fmt.Errorf("field %s: %w", key, err)
	}
	o.raw(key, b)
}

func (o *object) str(key, v string) { o.raw(key, quote(v)) }

// rawOr writes the stored value of key from extra, or def when there is
// none.
func (o *object) rawOr(key string, extra map[string]stdjson.RawMessage, def string) {
	if v, ok := extra[key]; ok {
		o.rawChecked(key, v)
		return
	}
	o.raw(key, []byte(def))
}

// rawChecked writes a stored value, failing the object when it is not
// valid JSON.
func (o *object) rawChecked(key string, v []byte) {
	if !stdjson.Valid(v) && o.err == nil {
		o.err = fmt.Errorf("field %s: invalid JSON", key)
	}
	o.raw(key, v)
}

func (o *object) bytes() ([]byte, error) {
	if o.n == 0 {
		o.buf.WriteByte('{')
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), o.err
}

// marshal encodes v without escaping <, > and &, and without the trailing
// newline of json.Encoder.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := stdjson.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func quote(s string) []byte {
	b, _ := marshal(s)
	return b
}

// extras adds fields kept from a stored object, in key order, skipping
// keys already written.
func (o *object) extras(extra map[string]stdjson.RawMessage, written ...string) {
	if len(extra) == 0 {
		return
	}
	skip := make(map[string]bool, len(written))
	for _, k := range written {
		skip[k] = true
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.rawChecked(k, extra[k])
	}
}

func encodeParts(parts []compact.Part) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		p := &parts[i]
		var o object
		o.str("type", string(p.Type))
		written := []string{"type"}
		switch p.Type {
		case compact.PartText:
			o.str("text", p.Text)
			written = append(written, "text")
		case compact.PartThinking:
			o.str("thinking", p.Thinking)
			written = append(written, "thinking")
		case compact.PartImage:
			img := p.Picture()
			o.str("data", img.Data)
			o.str("mimeType", img.MimeType)
			written = append(written, "data", "mimeType")
		case compact.PartToolCall:
			if p.ToolCall == nil {
				return nil, fmt.Errorf("content[%d]: tool call part without a tool call", i)
			}
			args := []byte(p.ToolCall.Arguments)
			if len(bytes.TrimSpace(args)) == 0 {
				args = []byte("{}")
			} else if !stdjson.Valid(args) {
				return nil, fmt.Errorf("content[%d].arguments: invalid JSON", i)
			}
			o.str("id", p.ToolCall.ID)
			o.str("name", p.ToolCall.Name)
			o.raw("arguments", args)
			written = append(written, "id", "name", "arguments")
		default:
			if p.Text != "" {
				o.str("text", p.Text)
				written = append(written, "text")
			}
		}
		o.extras(p.Extra, written...)
		out, err := o.bytes()
		if err != nil {
			return nil, err
		}
		b.Write(out)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// EncodeMessage returns the pi JSON of a message.
func EncodeMessage(m *compact.Message) ([]byte, error) {
	meta := m.Metadata()
	var o object
	o.str("role", string(m.Role))
	written := []string{"role"}
	content := func() {
		c, err := encodeParts(m.Content)
		if err != nil && o.err == nil {
			o.err = err
		}
		o.raw("content", c)
		written = append(written, "content")
	}
	switch m.Role {
	case compact.RoleAssistant:
		content()
		if m.Provider != "" {
			o.str("provider", m.Provider)
			written = append(written, "provider")
		}
		if m.Model != "" {
			o.str("model", m.Model)
			written = append(written, "model")
		}
		if m.Usage != nil {
			u := m.Usage
			wu := wireUsage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, TotalTokens: u.Total, CacheWrite1h: u.CacheWrite1h}
			// A stored usage object (kept whole because it has members
			// Usage does not model, such as cost) is written back when
			// its counts still agree with Usage. Messages built before
			// Usage.Stored kept it in Extra.
			raw := []byte(u.Stored)
			if len(raw) == 0 {
				raw = m.Extra["usage"]
			}
			var stored wireUsage
			if len(raw) > 0 && stdjson.Unmarshal(raw, &stored) == nil && stored == wu {
				o.raw("usage", raw)
			} else {
				o.val("usage", wu)
			}
			written = append(written, "usage")
		}
		if m.StopReason != "" {
			o.str("stopReason", string(m.StopReason))
			written = append(written, "stopReason")
		}
		if meta.ErrorMessage != "" {
			o.str("errorMessage", meta.ErrorMessage)
			written = append(written, "errorMessage")
		}
	case compact.RoleToolResult:
		o.str("toolCallId", m.ToolCallID)
		o.str("toolName", m.ToolName)
		written = append(written, "toolCallId", "toolName")
		content()
		if len(meta.Details) > 0 {
			o.raw("details", meta.Details)
			written = append(written, "details")
		}
		o.val("isError", m.IsError)
		written = append(written, "isError")
	case compact.RoleBash:
		o.str("command", meta.Command)
		o.str("output", meta.Output)
		o.val("exitCode", meta.ExitCode)
		o.val("cancelled", meta.Cancelled)
		o.rawOr("truncated", m.Extra, "false")
		written = append(written, "command", "output", "exitCode", "cancelled", "truncated")
		if meta.ExcludeFromContext {
			o.val("excludeFromContext", true)
			written = append(written, "excludeFromContext")
		}
	case compact.RoleCustom:
		o.str("customType", meta.CustomType)
		content()
		o.rawOr("display", m.Extra, "true")
		written = append(written, "customType", "display")
	default:
		content()
	}
	if m.Timestamp != 0 {
		o.val("timestamp", m.Timestamp)
		written = append(written, "timestamp")
	}
	o.extras(m.Extra, written...)
	return o.bytes()
}

// encodeEntry returns the JSON line (without newline) of a new entry.
// firstKeptIndex, when not negative, is also written as
// firstKeptEntryIndex on compaction entries appended to a version 1 file,
// so that pi's own migration of the file resolves the kept entry.
func encodeEntry(e *compact.Entry, firstKeptIndex int) ([]byte, error) {
	var o object
	meta := e.Metadata()
	o.str("type", string(e.Kind))
	o.str("id", e.ID)
	if e.ParentID == "" {
		o.raw("parentId", []byte("null"))
	} else {
		o.str("parentId", e.ParentID)
	}
	o.str("timestamp", e.Timestamp)
	switch e.Kind {
	case compact.KindMessage:
		if e.Message == nil {
			return nil, fmt.Errorf("message entry without a message")
		}
		m, err := EncodeMessage(e.Message)
		if err != nil {
			return nil, err
		}
		o.raw("message", m)
	case compact.KindCompaction:
		c := e.Compaction
		if c == nil {
			return nil, fmt.Errorf("compaction entry without compaction data")
		}
		o.str("summary", c.Summary)
		o.str("firstKeptEntryId", c.FirstKeptID)
		if firstKeptIndex >= 0 {
			o.val("firstKeptEntryIndex", firstKeptIndex)
		}
		o.val("tokensBefore", c.TokensBefore)
		if c.TokensAfter > 0 {
			o.val("tokensAfter", c.TokensAfter)
		}
		var d object
		read, modified := c.ReadFiles, c.ModifiedFiles
		if read == nil {
			read = []string{}
		}
		if modified == nil {
			modified = []string{}
		}
		d.val("readFiles", read)
		d.val("modifiedFiles", modified)
		keys := make([]string, 0, len(c.Details))
		for k := range c.Details {
			if k != "readFiles" && k != "modifiedFiles" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			d.val(k, c.Details[k])
		}
		details, err := d.bytes()
		if err != nil {
			return nil, err
		}
		o.raw("details", details)
		if c.FromHook {
			o.val("fromHook", true)
		}
	case compact.KindBranchSummary:
		summary := ""
		if e.Message != nil {
			summary = e.Message.Text()
		}
		o.str("fromId", meta.TargetID)
		o.str("summary", summary)
	case compact.KindCustomMessage:
		var parts []compact.Part
		if e.Message != nil {
			parts = e.Message.Content
		}
		c, err := encodeParts(parts)
		if err != nil {
			return nil, err
		}
		o.str("customType", meta.CustomType)
		o.raw("content", c)
		o.val("display", true)
	case compact.KindModelChange:
		o.str("provider", meta.Provider)
		o.str("modelId", meta.ModelID)
	case compact.KindThinkingLevelChange:
		o.str("thinkingLevel", meta.ThinkingLevel)
	case compact.KindLabel:
		o.str("targetId", meta.TargetID)
		if meta.Label != "" {
			o.str("label", meta.Label)
		}
	case compact.KindSessionInfo:
		o.str("name", meta.Name)
	case compact.KindCustom:
		o.str("customType", meta.CustomType)
		if len(meta.Data) > 0 {
			if !stdjson.Valid(meta.Data) {
				return nil, fmt.Errorf("field data: invalid JSON")
			}
			o.raw("data", meta.Data)
		}
	case compact.KindContextEdit:
		ce := e.Edit
		if ce == nil {
			return nil, fmt.Errorf("context_edit entry without edits")
		}
		o.str("strategy", ce.Strategy)
		var edits bytes.Buffer
		edits.WriteByte('[')
		for i, ed := range ce.Edits {
			if ed.TargetID == "" {
				return nil, fmt.Errorf("edits[%d].targetId: missing", i)
			}
			c, err := encodeParts(ed.Content)
			if err != nil {
				return nil, fmt.Errorf("edits[%d]: %w", i, err)
			}
			if i > 0 {
				edits.WriteByte(',')
			}
			var eo object
			eo.str("targetId", ed.TargetID)
			eo.raw("content", c)
			b, err := eo.bytes()
			if err != nil {
				return nil, err
			}
			edits.Write(b)
		}
		edits.WriteByte(']')
		o.raw("edits", edits.Bytes())
		o.val("tokensFreed", ce.TokensFreed)
		if ce.FirstChangedID != "" {
			o.str("firstChangedId", ce.FirstChangedID)
		}
	default:
		return nil, fmt.Errorf("cannot write entries of unknown type %q", e.Kind)
	}
	return o.bytes()
}
