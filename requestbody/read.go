package requestbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/compactkit/compact"
)

// Format is the name of this format in a Transcript and on the command
// line.
const Format = "request-body"

// field is one top-level member of the body, with the byte offset of its
// value.
type field struct {
	key   string
	value json.RawMessage
	off   int
}

// record is one element of a JSON array, with the byte offset where it
// starts in the file.
type record struct {
	raw json.RawMessage
	off int
}

// ReadFile reads the request body in the file at path.
func ReadFile(path string) (*compact.Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return Read(data, path)
}

// Read parses a request body held in memory. name is used in errors and
// warnings, which give the line of the record at fault.
func Read(data []byte, name string) (*compact.Transcript, error) {
	fields, err := topLevel(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	var msgs []record
	found := false
	for _, f := range fields {
		if f.key == "messages" {
			found = true
			if msgs, err = elements(f.value, f.off); err != nil {
				return nil, fmt.Errorf("%s:%d: field messages: %w", name, lineAt(data, f.off), err)
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("%s:1: field messages: missing (not a chat request body)", name)
	}
	r := &reader{
		name: name, data: data, shape: shapeOf(fields, msgs),
		t:     &compact.Transcript{Format: Format, Unknown: map[string]int{}},
		calls: map[string]string{},
	}
	r.header(fields)
	for i, m := range msgs {
		var err error
		if r.shape == ShapeAnthropic {
			err = r.anthropicMessage(i, m)
		} else {
			err = r.chatMessage(i, m)
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: messages[%d]%w", name, lineAt(data, m.off), i, err)
		}
	}
	return r.t, nil
}

// reader holds the state of one Read.
type reader struct {
	name  string
	data  []byte
	shape Shape
	t     *compact.Transcript
	// calls maps each tool call id seen so far to its tool name.
	calls map[string]string
	// legacy numbers the Chat function_call calls, which have no ids.
	legacy int
}

// header records the top-level fields other than messages: the system
// prompt as its own custom entry, everything else as one.
func (r *reader) header(fields []field) {
	var rest bytes.Buffer
	rest.WriteByte('{')
	var system json.RawMessage
	for _, f := range fields {
		switch f.key {
		case "messages":
			continue
		case "system":
			system = f.value
			continue
		case "model":
			var s string
			if json.Unmarshal(f.value, &s) == nil {
				r.t.Model = s
			}
		case "metadata":
			r.t.SessionID = claudeSession(f.value)
		}
		if rest.Len() > 1 {
			rest.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		rest.Write(k)
		rest.WriteByte(':')
		rest.Write(f.value)
	}
	rest.WriteByte('}')
	r.custom("request", rest.Bytes())
	if system != nil {
		r.custom("system", system)
	}
}

// custom appends a custom entry of the given record type.
func (r *reader) custom(typ string, data []byte) {
	r.t.Entries = append(r.t.Entries, &compact.Entry{Kind: compact.KindCustom, CustomType: Format + ":" + typ, Data: json.RawMessage(data)})
}

// add appends a message entry.
func (r *reader) add(m *compact.Message) {
	r.t.Entries = append(r.t.Entries, &compact.Entry{Kind: compact.KindMessage, Message: m})
}

// call records a tool call so that its result can be paired with it.
func (r *reader) call(c *compact.ToolCall) { r.calls[c.ID] = c.Name }

// result appends a tool result, or, when no call in the body has its id, a
// user message holding its content (with the id under key in Extra) and
// a warning naming where.
func (r *reader) result(m *compact.Message, where, key string) {
	name, ok := r.calls[m.ToolCallID]
	if ok {
		if m.ToolName == "" {
			m.ToolName = name
		}
		r.add(m)
		return
	}
	r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s: %s: tool result for call %q, which the body does not hold: kept as a user message", r.name, where, m.ToolCallID))
	id, _ := json.Marshal(m.ToolCallID)
	u := &compact.Message{Role: compact.RoleUser, Content: m.Content, Extra: m.Extra}
	if u.Extra == nil {
		u.Extra = map[string]json.RawMessage{}
	}
	u.Extra[key] = id
	if m.IsError {
		u.Extra["is_error"] = json.RawMessage("true")
	}
	r.add(u)
}

// placeholder is the text part standing for a block the transcript cannot
// model; the block itself is kept in the part's "requestPart" extra.
func (r *reader) placeholder(typ, text string, raw json.RawMessage) compact.Part {
	if text == "" {
		text = "[" + typ + "]"
	}
	r.t.Unknown[typ+" block"]++
	return compact.Part{Type: compact.PartText, Text: text, Extra: map[string]json.RawMessage{"requestPart": raw}}
}

// stopReason is the stop reason an assistant message of a request implies.
func stopReason(m *compact.Message) compact.StopReason {
	if len(m.ToolCalls()) > 0 {
		return compact.StopToolUse
	}
	return compact.StopEnd
}

// topLevel returns the members of the JSON object that data holds, in
// order. Errors start with the line number and a colon.
func topLevel(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%d: not a JSON object", lineAt(data, int(dec.InputOffset())))
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(data, dec, err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, syntaxError(data, dec, err)
		}
		out = append(out, field{key: key, value: v, off: valueStart(data, int(dec.InputOffset())-len(v))})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%d: data after the request object", lineAt(data, int(dec.InputOffset())))
	}
	return out, nil
}

// elements returns the elements of the JSON array raw, which starts at
// byte base of the file.
func elements(raw json.RawMessage, base int) ([]record, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errors.New("not an array")
	}
	var out []record
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, record{raw: v, off: base + int(dec.InputOffset()) - len(v)})
	}
	return out, nil
}

// valueStart returns off, the offset a decoder gives for a value's
// start; it exists to keep the offset inside data.
func valueStart(data []byte, off int) int {
	return max(0, min(off, len(data)))
}

// syntaxError turns a decoder error into "LINE: message".
func syntaxError(data []byte, dec *json.Decoder, err error) error {
	off := int(dec.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%d: truncated JSON: %w", lineAt(data, len(data)), io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("%d: invalid JSON: %w", lineAt(data, off), err)
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	off = max(0, min(off, len(data)))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// claudeSession returns the session id Claude Code puts in
// metadata.user_id, "" if none.
func claudeSession(metadata json.RawMessage) string {
	var md struct {
		UserID string `json:"user_id"`
	}
	if json.Unmarshal(metadata, &md) != nil || md.UserID == "" {
		return ""
	}
	if strings.HasPrefix(md.UserID, "{") {
		var v struct {
			SessionID string `json:"session_id"`
		}
		_ = json.Unmarshal([]byte(md.UserID), &v)
		return v.SessionID
	}
	if i := strings.LastIndex(md.UserID, "_session_"); i >= 0 {
		return md.UserID[i+len("_session_"):]
	}
	return ""
}
