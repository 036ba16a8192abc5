package requestbody

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/openai"
)

// Format is the name of this format in a Transcript and on the command
// line.
const Format = "request-body"

// ReadFile reads the request body in the file at path.
func ReadFile(path string) (*compact.Transcript, error) {
	return jsonrec.ReadFile(path, "read request body", Read)
}

// Read parses a request body held in memory. name is used in errors and
// warnings, which give the line of the record at fault.
func Read(data []byte, name string) (*compact.Transcript, error) {
	fields, err := jsonrec.Object(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	var msgs []jsonrec.Element
	found := false
	for _, f := range fields {
		if f.Key == "messages" {
			found = true
			if msgs, err = jsonrec.Array(data, "field messages", f.Value, f.Off); err != nil {
				return nil, fmt.Errorf("%s:%w", name, err)
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
	r.at("header", nil)
	r.header(fields)
	err = jsonrec.EachElement(data, "messages", msgs, func(i int, m jsonrec.Element) error {
		r.at("messages "+strconv.Itoa(i), m.Raw)
		if r.shape == ShapeAnthropic {
			return r.anthropicMessage(i, m)
		}
		return r.chatMessage(i, m)
	})
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	jsonrec.SafeExtras(r.t, Format)
	jsonrec.OneLine(r.t)
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
	// pairs numbers the Chat function_call calls, which have no ids, and
	// names Chat results after their calls.
	pairs openai.Calls

	// ids gives each entry an id derived from pos, the place in the body
	// of the message being read, and src, its bytes (the header's entries
	// hash their own data).
	ids jsonrec.IDs
	pos string
	src []byte
}

// at sets the message the next entries are read from.
func (r *reader) at(pos string, src []byte) { r.pos, r.src = pos, src }

// entry appends e with an id derived from the current place and bytes,
// or from data when they are empty (the header).
func (r *reader) entry(e *compact.Entry, data []byte) {
	src := r.src
	if len(src) == 0 {
		src = data
	}
	e.ID = r.ids.Derive(r.pos, src)
	r.t.Entries = append(r.t.Entries, e)
}

// header records the top-level fields other than messages: the system
// prompt as its own custom entry, everything else as one.
func (r *reader) header(fields []jsonrec.Member) {
	var rest bytes.Buffer
	rest.WriteByte('{')
	var system json.RawMessage
	for _, f := range fields {
		switch f.Key {
		case "messages":
			continue
		case "system":
			system = f.Value
			continue
		case "model":
			var s string
			if json.Unmarshal(f.Value, &s) == nil {
				r.t.Model = s
			}
		case "metadata":
			r.t.SessionID = claudeSession(f.Value)
		}
		if rest.Len() > 1 {
			rest.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		rest.Write(k)
		rest.WriteByte(':')
		rest.Write(f.Value)
	}
	rest.WriteByte('}')
	r.custom("request", rest.Bytes())
	if system != nil {
		r.custom("system", system)
	}
}

// roleOf decodes the members of a message and its role; a message
// without a role is an error ".role: missing".
func roleOf(raw json.RawMessage) (map[string]json.RawMessage, string, error) {
	fields, err := jsonrec.Fields(raw)
	if err != nil {
		return nil, "", err
	}
	var role string
	if err := jsonrec.String(fields, "role", &role); err != nil {
		return nil, "", err
	}
	if role == "" {
		return nil, "", fmt.Errorf(".role: missing")
	}
	return fields, role, nil
}

// unknownRole keeps a message of a role the reader does not know as a
// custom entry of that type and counts the role in Transcript.Unknown.
func (r *reader) unknownRole(role string, raw []byte) {
	r.t.Unknown[role]++
	r.custom(role, raw)
}

// custom appends a custom entry of the given record type.
func (r *reader) custom(typ string, data []byte) {
	r.entry(&compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + typ, Data: json.RawMessage(data)}}, data)
}

// add appends a message entry.
func (r *reader) add(m *compact.Message) {
	r.entry(&compact.Entry{Kind: compact.KindMessage, Message: m}, nil)
}

// addUser appends a user message, split around the <system-reminder>
// blocks Claude Code writes into the user's text (see
// compact.SplitReminders): each run of reminders becomes a harness note
// of kind system_reminder, each run of the rest a user message; the first
// piece keeps m's extra fields.
func (r *reader) addUser(m *compact.Message) {
	runs := compact.SplitReminders(m.Content)
	if len(runs) <= 1 && (len(runs) == 0 || !runs[0].Reminder) {
		r.add(m)
		return
	}
	for i, run := range runs {
		u := &compact.Message{Role: compact.RoleUser, Content: run.Parts}
		if i == 0 {
			u.Extra = m.Extra
		}
		if run.Reminder {
			u.MarkHarnessNote(Format, "system_reminder")
		}
		r.add(u)
	}
}

// call records a tool call so that its result can be paired with it.
func (r *reader) call(c *compact.ToolCall) { r.calls[c.ID] = c.Name }

// result appends a tool result, or, when no call in the body has its id, a
// harness note holding its content (see compact.OrphanResult; the id under
// key in Extra) and a warning naming where.
func (r *reader) result(m *compact.Message, where, key string) {
	name, ok := r.calls[m.ToolCallID]
	if ok {
		if m.ToolName == "" {
			m.ToolName = name
		}
		r.add(m)
		return
	}
	r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s:%s: tool result for call %q, which the body does not hold: kept as a harness note", r.name, where, m.ToolCallID))
	id, _ := json.Marshal(m.ToolCallID)
	m.Extra = jsonrec.Set(m.Extra, key, id)
	if m.IsError {
		m.Extra = jsonrec.Set(m.Extra, "is_error", json.RawMessage("true"))
	}
	r.add(compact.OrphanResult(Format, m))
}

// stopReason is the stop reason an assistant message of a request implies.
func stopReason(m *compact.Message) compact.StopReason {
	if len(m.ToolCalls()) > 0 {
		return compact.StopToolUse
	}
	return compact.StopEnd
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
