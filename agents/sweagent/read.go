package sweagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the name of this format in a Transcript and on the command
// line.
const Format = "swe-agent"

// Detect reports whether head, the first bytes of a file (possibly cut
// anywhere), is a SWE-agent trajectory: a JSON object whose top-level
// keys, read up to the first array, include "trajectory", "history" or
// "attempts" holding an array, before any key of a chat request body.
func Detect(head []byte) bool {
	found := false
	jsonrec.Keys(head, func(key string, first byte) bool {
		switch key {
		case "trajectory", "history", "attempts":
			found = first == '['
			return false
		case "messages", "type", "model", "events":
			return false
		}
		return true
	})
	return found
}

// ReadFile reads the trajectory in the file at path.
func ReadFile(path string) (*compact.Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read SWE-agent trajectory: %w", err)
	}
	return Read(data, path)
}

// Read parses a trajectory held in memory. name is used in errors and
// warnings, which give the line of the record at fault.
func Read(data []byte, name string) (*compact.Transcript, error) {
	members, err := jsonrec.Object(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	r := &reader{name: name, data: data, calls: map[string]string{},
		t: &compact.Transcript{Format: Format, Unknown: map[string]int{}}}
	byKey := map[string]jsonrec.Member{}
	for _, m := range members {
		byKey[m.Key] = m
	}
	history, ok := byKey["history"]
	if !ok {
		if history, ok = chosenAttempt(data, byKey["attempts"]); !ok {
			return nil, fmt.Errorf("%s:1: field history: missing (not a SWE-agent trajectory)", name)
		}
	}
	items, err := jsonrec.Array(data, "field history", history.Value, history.Off)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	r.t.Model = modelName(byKey["replay_config"].Value)
	r.t.Cwd = workingDir(byKey["trajectory"].Value)

	// What comes before the conversation: the run's set-up.
	for _, m := range members {
		r.at("member "+m.Key, m.Value)
		switch m.Key {
		case "history", "trajectory", "info":
		case "environment", "replay_config", "attempts":
			r.custom(m.Key, m.Value)
		default:
			r.t.Unknown[m.Key]++
			r.custom(m.Key, m.Value)
		}
	}
	for i, it := range items {
		r.at("history "+strconv.Itoa(i), it.Raw)
		if err := r.item(it); err != nil {
			return nil, fmt.Errorf("%s:%d: history[%d]%w", name, jsonrec.Line(data, it.Off), i, err)
		}
	}
	// What comes after it: the steps as run, and the run's result.
	for _, key := range [...]string{"trajectory", "info"} {
		if m, ok := byKey[key]; ok {
			r.at("member "+key, m.Value)
			r.custom(key, m.Value)
		}
	}
	jsonrec.SafeExtras(r.t, Format)
	jsonrec.OneLine(r.t)
	return r.t, nil
}

// chosenAttempt returns the history of the last attempt of a RetryAgent
// file that has no top-level copy of the chosen one.
func chosenAttempt(data []byte, attempts jsonrec.Member) (jsonrec.Member, bool) {
	if attempts.Value == nil {
		return jsonrec.Member{}, false
	}
	list, err := jsonrec.Array(data, "attempts", attempts.Value, attempts.Off)
	if err != nil || len(list) == 0 {
		return jsonrec.Member{}, false
	}
	last := list[len(list)-1]
	fields, err := jsonrec.Object(last.Raw)
	if err != nil {
		return jsonrec.Member{}, false
	}
	for _, f := range fields {
		if f.Key == "history" {
			return jsonrec.Member{Key: f.Key, Value: f.Value, Off: last.Off + f.Off}, true
		}
	}
	return jsonrec.Member{}, false
}

// modelName returns replay_config's agent.model.name; replay_config is an
// object or a string holding one.
func modelName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var rc struct {
		Agent struct {
			Model struct {
				Name string `json:"name"`
			} `json:"model"`
		} `json:"agent"`
	}
	_ = json.Unmarshal(raw, &rc)
	return rc.Agent.Model.Name
}

// workingDir returns the working_dir of the first trajectory step that
// records one; state is an object or, in older files, a string holding
// one.
func workingDir(raw json.RawMessage) string {
	var steps []struct {
		State json.RawMessage `json:"state"`
	}
	_ = json.Unmarshal(raw, &steps)
	for _, st := range steps {
		state := st.State
		var s string
		if json.Unmarshal(state, &s) == nil {
			state = json.RawMessage(s)
		}
		var v struct {
			WorkingDir string `json:"working_dir"`
		}
		if json.Unmarshal(state, &v) == nil && v.WorkingDir != "" {
			return v.WorkingDir
		}
	}
	return ""
}

// reader holds the state of one Read.
type reader struct {
	name  string
	data  []byte
	t     *compact.Transcript
	calls map[string]string // tool call id -> tool name

	// ids gives each entry an id derived from pos, the place in the file
	// of the member or history item being read, and src, its bytes.
	ids jsonrec.IDs
	pos string
	src []byte
}

// at sets the member or history item the next entries are read from.
func (r *reader) at(pos string, src []byte) { r.pos, r.src = pos, src }

// entry appends e with its id.
func (r *reader) entry(e *compact.Entry) {
	e.ID = r.ids.Derive(r.pos, r.src)
	r.t.Entries = append(r.t.Entries, e)
}

// custom appends a custom entry of the given record type.
func (r *reader) custom(typ string, data json.RawMessage) {
	r.entry(&compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + typ, Data: data}})
}

// add appends a message entry.
func (r *reader) add(m *compact.Message) {
	r.entry(&compact.Entry{Kind: compact.KindMessage, Message: m})
}

// item maps one history item. Errors start with the path inside it.
func (r *reader) item(it jsonrec.Element) error {
	f, err := jsonrec.Fields(it.Raw)
	if err != nil {
		return err
	}
	var role string
	if err := jsonrec.String(f, "role", &role); err != nil {
		return err
	}
	switch role {
	case "system":
		r.custom("system", it.Raw)
		return nil
	case "user":
		parts, err := r.content(f["content"])
		if err != nil {
			return err
		}
		r.add(&compact.Message{Role: compact.RoleUser, Content: parts, Extra: jsonrec.Extras(f, "role", "content")})
		return nil
	case "assistant":
		return r.assistant(f)
	case "tool":
		return r.tool(f, it)
	case "":
		return fmt.Errorf(".role: missing")
	}
	r.t.Unknown[role]++
	r.custom(role, it.Raw)
	return nil
}

// assistant maps an assistant item: thinking blocks, the content, then
// the tool calls.
func (r *reader) assistant(f map[string]json.RawMessage) error {
	m := &compact.Message{Role: compact.RoleAssistant, Extra: jsonrec.Extras(f, "role", "content", "tool_calls", "thinking_blocks")}
	if raw := f["thinking_blocks"]; !jsonrec.IsEmpty(raw) {
		var blocks []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return fmt.Errorf(".thinking_blocks: not an array of objects")
		}
		for j, b := range blocks {
			var typ, text string
			if err := jsonrec.String(b, "type", &typ); err != nil {
				return fmt.Errorf(".thinking_blocks[%d]%w", j, err)
			}
			if err := jsonrec.String(b, "thinking", &text); err != nil {
				return fmt.Errorf(".thinking_blocks[%d]%w", j, err)
			}
			extra := jsonrec.Extras(b, "type", "thinking", "signature", "data")
			if sig, ok := b["signature"]; ok {
				extra = jsonrec.Set(extra, "thinkingSignature", sig)
			}
			if typ == "redacted_thinking" {
				text = "[Reasoning redacted]"
				extra = jsonrec.Set(extra, "redacted", json.RawMessage("true"))
				if data, ok := b["data"]; ok {
					extra = jsonrec.Set(extra, "thinkingSignature", data)
				}
			}
			m.Content = append(m.Content, compact.Part{Type: compact.PartThinking, Thinking: text, Extra: extra})
		}
	}
	parts, err := r.content(f["content"])
	if err != nil {
		return err
	}
	for _, p := range parts {
		if p.Type == compact.PartText && p.Text == "" && p.Extra == nil {
			continue
		}
		m.Content = append(m.Content, p)
	}
	if err := jsonrec.EachObject(f, "tool_calls", func(c map[string]json.RawMessage) error {
		part, err := r.call(c)
		m.Content = append(m.Content, part)
		return err
	}); err != nil {
		return err
	}
	m.StopReason = compact.StopEnd
	if len(m.ToolCalls()) > 0 {
		m.StopReason = compact.StopToolUse
	}
	if demo := f["is_demo"]; string(demo) != "true" {
		m.Model = r.t.Model
	}
	r.add(m)
	return nil
}

// call maps one tool call {id, type, function{name, arguments}}.
func (r *reader) call(c map[string]json.RawMessage) (compact.Part, error) {
	var id, name, args string
	if err := jsonrec.String(c, "id", &id); err != nil {
		return compact.Part{}, err
	}
	if id == "" {
		return compact.Part{}, fmt.Errorf(".id: missing")
	}
	fn, err := jsonrec.Fields(c["function"])
	if err != nil {
		return compact.Part{}, fmt.Errorf(".function%w", err)
	}
	if err := jsonrec.String(fn, "name", &name); err != nil {
		return compact.Part{}, fmt.Errorf(".function%w", err)
	}
	var arguments json.RawMessage
	if raw := bytes.TrimSpace(fn["arguments"]); len(raw) > 0 && raw[0] == '{' {
		arguments = raw // already an object
	} else {
		if err := jsonrec.String(fn, "arguments", &args); err != nil {
			return compact.Part{}, fmt.Errorf(".function%w", err)
		}
		var ok bool
		if arguments, ok = jsonrec.Arguments(args); !ok {
			r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s: tool call %q: arguments are not a JSON object: kept as a string under _raw", r.name, id))
		}
	}
	extra := jsonrec.Extras(c, "id", "type", "function")
	var typ string
	if jsonrec.String(c, "type", &typ) == nil && typ != "" && typ != "function" {
		extra = jsonrec.Set(extra, "callType", c["type"])
	}
	tc := &compact.ToolCall{ID: id, Name: name, Arguments: arguments}
	r.calls[id] = name
	return compact.Part{Type: compact.PartToolCall, ToolCall: tc, Extra: extra}, nil
}

// tool maps a tool item: the result of the call its tool_call_ids name,
// or, when that call is not in the history, a harness note (see
// compact.OrphanResult) and a warning.
func (r *reader) tool(f map[string]json.RawMessage, it jsonrec.Element) error {
	var ids []string
	if raw := f["tool_call_ids"]; !jsonrec.IsNull(raw) && raw != nil {
		if err := json.Unmarshal(raw, &ids); err != nil {
			return fmt.Errorf(".tool_call_ids: not an array of strings")
		}
	}
	parts, err := r.content(f["content"])
	if err != nil {
		return err
	}
	id := ""
	if len(ids) > 0 {
		id = ids[0]
	}
	name, ok := r.calls[id]
	if !ok {
		r.t.Warnings = append(r.t.Warnings, fmt.Sprintf("%s:%d: tool result for call %q, which the history does not hold: kept as a harness note", r.name, jsonrec.Line(r.data, it.Off), id))
		r.add(compact.OrphanResult(Format, &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, Content: parts, Extra: jsonrec.Extras(f, "role", "content")}))
		return nil
	}
	extra := jsonrec.Extras(f, "role", "content", "tool_call_ids")
	if len(ids) > 1 {
		// SWE-agent writes one id per observation; keep any others.
		extra = jsonrec.Set(extra, "tool_call_ids", f["tool_call_ids"])
	}
	r.add(&compact.Message{Role: compact.RoleToolResult, ToolCallID: id, ToolName: name, Content: parts, Extra: extra})
	return nil
}

// content maps an item's content: a string, or a list of parts (text,
// image_url with a data: URL; any other part stays a text part "[type]"
// holding the part under its "part" extra).
func (r *reader) content(raw json.RawMessage) ([]compact.Part, error) {
	return jsonrec.Content(raw, "a list", r.part)
}

// part maps one element of a content list.
func (r *reader) part(p json.RawMessage) (compact.Part, error) {
	f, err := jsonrec.Fields(p)
	if err != nil {
		return compact.Part{}, err
	}
	var typ, text string
	if err := jsonrec.String(f, "type", &typ); err != nil {
		return compact.Part{}, err
	}
	switch typ {
	case "text":
		if err := jsonrec.String(f, "text", &text); err != nil {
			return compact.Part{}, err
		}
		return compact.Part{Type: compact.PartText, Text: text, Extra: jsonrec.Extras(f, "type", "text")}, nil
	case "image_url":
		var img struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(f["image_url"], &img)
		if mime, data, ok := jsonrec.SplitDataURL(img.URL); ok {
			return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(f, "type", "image_url"), Image: &compact.Image{MimeType: mime, Data: data}}, nil
		}
	case "":
		return compact.Part{}, fmt.Errorf(".type: missing")
	}
	r.t.Unknown[typ+" part"]++
	return compact.Part{Type: compact.PartText, Text: "[" + typ + "]", Extra: map[string]json.RawMessage{"part": p}}, nil
}
