package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// build turns a replayed recording into the transcript's entries: the
// session's metadata first (a custom entry "gemini-cli:session"), then the
// messages, compressions and other records in file order.
func build(f *fold) *compact.Transcript {
	t := &compact.Transcript{Format: Format, Unknown: f.unknown, Warnings: f.warnings}
	c := &builder{name: f.name, t: t, calls: map[string]string{}, answered: map[string]bool{}, used: map[string]bool{}}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(f.meta[k], &s)
		return s
	}
	t.SessionID, t.Timestamp = str("sessionId"), str("startTime")
	var dirs []string
	if json.Unmarshal(f.meta["directories"], &dirs) == nil && len(dirs) > 0 {
		t.Cwd = dirs[0] // the workspace directories a subagent recording names
	}
	root := ""
	if len(f.meta) > 0 {
		root = c.id("session")
		var buf bytes.Buffer
		buf.WriteByte('{')
		for i, k := range f.metaKeys {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(k)
			buf.Write(key)
			buf.WriteByte(':')
			buf.Write(f.meta[k])
		}
		buf.WriteByte('}')
		t.Entries = append(t.Entries, &compact.Entry{ID: root, Kind: compact.KindCustom, Timestamp: t.Timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":session", Data: buf.Bytes()}})
	}
	var nextKept []*compact.Entry // compactions waiting for the next entry as first kept
	add := func(e *compact.Entry) {
		for _, w := range nextKept {
			w.Compaction.FirstKeptID = e.ID
		}
		nextKept = nil
		t.Entries = append(t.Entries, e)
	}
	for _, ev := range f.events {
		switch {
		case ev.slot != nil:
			s := ev.slot
			entries, err := c.messageEntries(s.rec)
			if err != nil {
				c.warn("%s:%d: message %s: %v (kept as stored)", f.name, s.rec.line, s.rec.id, err)
				t.Unknown["invalid message"]++
				entries = []*compact.Entry{{ID: c.id(s.rec.id), Kind: compact.KindCustom, Timestamp: s.rec.timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":invalid", Data: s.rec.raw}}}
			}
			if s.branch {
				parent := root
				if s.parent != nil {
					parent = s.parent.last
				}
				if parent == "" && len(t.Entries) > 0 {
					// No metadata entry to branch from: start a root.
					t.Entries = append(t.Entries, &compact.Entry{ID: c.id("branch"), Kind: compact.KindCustom, Timestamp: s.rec.timestamp, Meta: &compact.EntryMeta{CustomType: Format + ":branch", Data: json.RawMessage(`{}`)}})
					parent = t.Entries[len(t.Entries)-1].ID
				}
				entries[0].ParentID = parent
			}
			for _, e := range entries {
				add(e)
			}
			s.first, s.last = entries[0].ID, entries[len(entries)-1].ID
		case ev.comp != nil:
			e := c.compaction(ev.comp)
			for i := len(t.Entries) - 1; i >= 0; i-- {
				if m := t.Entries[i].Message; m != nil && m.Role == compact.RoleAssistant && m.Usage != nil {
					e.Compaction.TokensBefore = m.Usage.ContextTokens()
					break
				}
			}
			t.Entries = append(t.Entries, e)
			if ev.comp.firstKept == nil {
				nextKept = append(nextKept, e)
			}
		case ev.custom != nil:
			add(&compact.Entry{ID: c.id(fmt.Sprintf("line-%d", ev.custom.line)), Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + ev.custom.kind, Data: ev.custom.raw}})
		}
	}
	for _, e := range t.Entries {
		if m := e.Message; m != nil && m.Role == compact.RoleAssistant && m.Model != "" {
			t.Model, t.Provider = m.Model, m.Provider
			break
		}
	}
	if len(t.Unknown) == 0 {
		t.Unknown = nil
	}
	return t
}

// builder turns message records into entries.
type builder struct {
	name string
	t    *compact.Transcript
	// calls maps each tool call id seen to its tool name; answered marks
	// those whose result has been emitted.
	calls    map[string]string
	answered map[string]bool
	// used holds the entry ids given so far.
	used map[string]bool
}

func (c *builder) warn(format string, args ...any) {
	c.t.Warnings = append(c.t.Warnings, fmt.Sprintf(format, args...))
}

// id returns want, or want with a suffix when it is taken (a message
// written again after a rewind).
func (c *builder) id(want string) string {
	id := want
	for n := 2; c.used[id]; n++ {
		id = fmt.Sprintf("%s~%d", want, n)
	}
	c.used[id] = true
	return id
}

// usage maps a TokensSummary. input (promptTokenCount) includes the cached
// part, so Input = input - cached, plus the tool-use prompt (tool), which
// the API counts apart; Output = output + thoughts (both are generated
// tokens); Total = total.
func (k tokens) usage() *compact.Usage {
	in := k.Input - k.Cached
	if in < 0 {
		in = k.Input
	}
	return &compact.Usage{Input: in + k.Tool, CacheRead: k.Cached, Output: k.Output + k.Thoughts, Total: k.Total}
}

// messageEntries returns the entries of one message record.
func (c *builder) messageEntries(r *msgRecord) ([]*compact.Entry, error) {
	ts := r.timestamp
	switch r.typ {
	case "user":
		return c.user(r, ts)
	case "gemini":
		return c.gemini(r, ts)
	case "info", "error", "warning":
	default:
		c.t.Unknown["type:"+r.typ]++
	}
	return []*compact.Entry{{ID: c.id(r.id), Kind: compact.KindCustom, Timestamp: ts, Meta: &compact.EntryMeta{CustomType: Format + ":" + r.typ, Data: r.raw}}}, nil
}

// user maps a user message: its text and images; functionResponse parts
// (which newer versions record as a user message after the calls) become
// tool results unless the call's own record already gave its result.
func (c *builder) user(r *msgRecord, ts string) ([]*compact.Entry, error) {
	parts, err := decodeParts(r.fields["content"])
	if err != nil {
		return nil, fmt.Errorf("field content: %w", err)
	}
	msg := &compact.Message{Role: compact.RoleUser, Timestamp: jsonrec.Millis(ts)}
	var unknown []json.RawMessage
	var results []*compact.Message
	dup := 0
	for _, p := range parts {
		if addContent(msg, p) {
			continue
		}
		if p.has("functionResponse") {
			var fr functionResponse
			if json.Unmarshal(p.fields["functionResponse"], &fr) == nil {
				if c.answered[fr.ID] {
					dup++ // the same output as the call record's result
					continue
				}
				if tool, ok := c.calls[fr.ID]; ok {
					c.answered[fr.ID] = true
					results = append(results, responseResult(fr, fr.ID, tool, msg.Timestamp))
					continue
				}
				c.warn("%s:%d: message %s: functionResponse %q has no earlier call; kept as a harness note", c.name, r.line, r.id, fr.ID)
				results = append(results, orphanResult(fr, msg.Timestamp))
				continue
			}
		}
		unknown = append(unknown, p.raw)
		c.t.Unknown["part:"+p.kind()]++
	}
	msg.Extra = messageExtra(r, unknown, "content")
	if len(msg.Content) == 0 && len(results) == 0 && dup > 0 {
		// Only outputs already given by the calls' own records: keep the
		// record, out of the context.
		return []*compact.Entry{{ID: c.id(r.id), Kind: compact.KindCustom, Timestamp: ts, Meta: &compact.EntryMeta{CustomType: Format + ":tool-response", Data: r.raw}}}, nil
	}
	markSetup(msg)
	var out []*compact.Entry
	for k, res := range results {
		out = append(out, &compact.Entry{ID: c.id(fmt.Sprintf("%s#%d", r.id, k+1)), Kind: compact.KindMessage, Timestamp: ts, Message: res})
	}
	if len(msg.Content) > 0 || len(results) == 0 {
		out = append(out, &compact.Entry{ID: c.id(r.id), Kind: compact.KindMessage, Timestamp: ts, Message: msg})
	} else {
		out[0].Message.Extra = jsonrec.Merge(msg.Extra, out[0].Message.Extra)
	}
	return out, nil
}

// ownKeys are the message extras this package sets itself; a stored
// member of the same name is kept as "gemini-cli.<name>" (the members
// named as pi's fields are renamed by jsonrec.SafeExtras, in Read).
var ownKeys = map[string]bool{"unknownParts": true, "response": true}

// messageExtra returns the members of a record a Message does not model,
// plus the parts it could not map.
func messageExtra(r *msgRecord, unknown []json.RawMessage, modelled ...string) map[string]json.RawMessage {
	return jsonrec.Merge(extras(r.fields, ownKeys, append([]string{"id", "timestamp", "type"}, modelled...)...), unknownExtra(unknown))
}

// gemini maps a model message: its thoughts, its content, its tool calls
// (each followed by a tool result message made from the call's result),
// its tokens as usage.
func (c *builder) gemini(r *msgRecord, ts string) ([]*compact.Entry, error) {
	msg := &compact.Message{Role: compact.RoleAssistant, Timestamp: jsonrec.Millis(ts), Provider: "google"}
	if v, ok := r.fields["model"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &msg.Model); err != nil {
			return nil, fmt.Errorf("field model: not a string")
		}
	}
	if v, ok := r.fields["thoughts"]; ok && string(v) != "null" {
		var thoughts []map[string]json.RawMessage
		if err := json.Unmarshal(v, &thoughts); err != nil {
			return nil, fmt.Errorf("field thoughts: not an array of objects")
		}
		for _, th := range thoughts {
			var subject, desc string
			_ = json.Unmarshal(th["subject"], &subject)
			_ = json.Unmarshal(th["description"], &desc)
			text := desc
			if subject != "" {
				text = "**" + subject + "** " + desc
			}
			msg.Content = append(msg.Content, compact.Part{Type: compact.PartThinking, Thinking: text,
				Extra: jsonrec.Extras(th, "subject", "description")})
		}
	}
	parts, err := decodeParts(r.fields["content"])
	if err != nil {
		return nil, fmt.Errorf("field content: %w", err)
	}
	var calls []toolCall
	if v, ok := r.fields["toolCalls"]; ok && string(v) != "null" {
		var raws []map[string]json.RawMessage
		if err := json.Unmarshal(v, &raws); err != nil {
			return nil, fmt.Errorf("field toolCalls: not an array of objects")
		}
		for i, f := range raws {
			tc := toolCall{fields: f}
			for k, dst := range map[string]*string{"id": &tc.id, "name": &tc.name, "status": &tc.status} {
				if v, ok := f[k]; ok && string(v) != "null" {
					if err := json.Unmarshal(v, dst); err != nil {
						return nil, fmt.Errorf("field toolCalls[%d].%s: not a string", i, k)
					}
				}
			}
			if tc.id == "" {
				tc.id = fmt.Sprintf("%s-call-%d", r.id, i+1)
			}
			calls = append(calls, tc)
		}
	}
	inCalls := map[string]bool{}
	for _, tc := range calls {
		inCalls[tc.id] = true
	}
	var unknown []json.RawMessage
	for _, p := range parts {
		if addContent(msg, p) {
			continue
		}
		if p.has("functionCall") {
			var fc functionCall
			if json.Unmarshal(p.fields["functionCall"], &fc) == nil && fc.Name != "" && !inCalls[fc.ID] {
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("%s-fc-%d", r.id, len(msg.Content)+1)
				}
				msg.Content = append(msg.Content, callPart(p, fc, id))
				c.calls[id] = fc.Name
				continue
			}
			if inCalls[fc.ID] {
				continue // recorded again in toolCalls
			}
		}
		unknown = append(unknown, p.raw)
		c.t.Unknown["part:"+p.kind()]++
	}
	var results []*compact.Message
	for _, tc := range calls {
		msg.Content = append(msg.Content, compact.Part{Type: compact.PartToolCall,
			ToolCall: &compact.ToolCall{ID: tc.id, Name: tc.name, Arguments: objectArgs(tc.fields["args"])},
			Extra:    jsonrec.Extras(tc.fields, "id", "name", "args", "result")})
		c.calls[tc.id] = tc.name
		res, err := c.result(tc, msg.Timestamp)
		if err != nil {
			return nil, err
		}
		c.answered[tc.id] = true
		results = append(results, res)
	}
	if v, ok := r.fields["tokens"]; ok && string(v) != "null" {
		var k tokens
		if err := json.Unmarshal(v, &k); err != nil {
			return nil, fmt.Errorf("field tokens: %s", fieldError(err))
		}
		msg.Usage = k.usage()
	}
	msg.StopReason = compact.StopEnd
	if len(msg.ToolCalls()) > 0 {
		msg.StopReason = compact.StopToolUse
	}
	msg.Extra = messageExtra(r, unknown, "content", "thoughts", "toolCalls", "model")
	out := []*compact.Entry{{ID: c.id(r.id), Kind: compact.KindMessage, Timestamp: ts, Message: msg}}
	for k, res := range results {
		out = append(out, &compact.Entry{ID: c.id(fmt.Sprintf("%s#%d", r.id, k+1)), Kind: compact.KindMessage, Timestamp: ts, Message: res})
	}
	return out, nil
}

// result makes the tool result message of a call from its result parts:
// the output (or error) of its functionResponse as text, other parts as
// text and images. A call without a result (cancelled) gives an empty
// result. IsError is set by an error response or a status of error or
// cancelled.
func (c *builder) result(tc toolCall, ts int64) (*compact.Message, error) {
	res := &compact.Message{Role: compact.RoleToolResult, ToolCallID: tc.id, ToolName: tc.name, Timestamp: ts,
		IsError: tc.status == "error" || tc.status == "cancelled"}
	parts, err := decodeParts(tc.fields["result"])
	if err != nil {
		return nil, fmt.Errorf("field toolCalls %s: result: %w", tc.id, err)
	}
	var unknown []json.RawMessage
	var texts []string
	for _, p := range parts {
		if p.has("functionResponse") {
			var fr functionResponse
			if json.Unmarshal(p.fields["functionResponse"], &fr) == nil {
				text, isErr, rest := responseText(fr.Response)
				res.IsError = res.IsError || isErr
				texts = append(texts, text)
				if rest != nil {
					if res.Extra == nil {
						res.Extra = map[string]json.RawMessage{}
					}
					res.Extra["response"] = rest
				}
				continue
			}
		}
		if q, ok := contentPart(p); ok {
			if q.Type == "" {
				continue
			}
			if q.Type == compact.PartText {
				texts = append(texts, q.Text)
				continue
			}
			res.Content = append(res.Content, q)
			continue
		}
		unknown = append(unknown, p.raw)
		c.t.Unknown["part:"+p.kind()]++
	}
	if len(texts) > 0 || len(res.Content) == 0 {
		res.Content = append([]compact.Part{{Type: compact.PartText, Text: strings.Join(texts, "\n")}}, res.Content...)
	}
	res.Extra = jsonrec.Merge(res.Extra, unknownExtra(unknown))
	return res, nil
}

// fieldError words a JSON decoding error as "X: ..." (the caller names
// the field it decoded).
func fieldError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return fmt.Sprintf("%s: %s is not a %s", te.Field, te.Value, te.Type)
	}
	return err.Error()
}

// setupOpenings begin the first user message Gemini CLI sends in a chat:
// its own account of the date, the system and the folders, not the
// user's words (newer versions wrap it in <session_context>).
var setupOpenings = []string{"<session_context>", "This is the Gemini CLI. We are setting up the context for our chat."}

// markSetup turns a user message that is Gemini CLI's setup context into
// a harness note of kind session_context (see compact.IsHarnessNote), so
// that a summary never quotes it as the user's request. A message with
// other parts than text stays the user's.
func markSetup(m *compact.Message) {
	if len(m.Content) == 0 {
		return
	}
	for _, p := range m.Content {
		if p.Type != compact.PartText {
			return
		}
	}
	first := strings.TrimSpace(m.Content[0].Text)
	for _, o := range setupOpenings {
		if strings.HasPrefix(first, o) {
			m.MarkHarnessNote(Format, "session_context")
			return
		}
	}
}

// extras returns the members of f other than the modelled ones, nil if
// none; one named in reserved is kept as "gemini-cli.<name>".
func extras(f map[string]json.RawMessage, reserved map[string]bool, modelled ...string) map[string]json.RawMessage {
	return jsonrec.ExtrasRenamed(f, reserved, Format+".", modelled...)
}

// addContent appends p to msg when it is a text, thought or image part
// that maps to content, and reports whether it was one of those (an
// empty one is dropped); function calls and responses are the caller's.
func addContent(msg *compact.Message, p part) bool {
	q, ok := contentPart(p)
	if ok && q.Type != "" {
		msg.Content = append(msg.Content, q)
	}
	return ok
}

// contentPart maps a text, thought or image part; ok is false for the
// others (function calls and responses are handled by the caller).
func contentPart(p part) (compact.Part, bool) {
	switch {
	case p.has("text"):
		var thought bool
		_ = json.Unmarshal(p.fields["thought"], &thought)
		if thought {
			return compact.Part{Type: compact.PartThinking, Thinking: p.str("text"),
				Extra: jsonrec.Extras(p.fields, "text", "thought")}, true
		}
		if p.str("text") == "" && len(p.fields) == 1 {
			return compact.Part{}, true // an empty text: nothing to keep
		}
		return compact.Part{Type: compact.PartText, Text: p.str("text"), Extra: jsonrec.Extras(p.fields, "text")}, true
	case p.has("inlineData"):
		var d struct {
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
		}
		if json.Unmarshal(p.fields["inlineData"], &d) != nil || !strings.HasPrefix(d.MimeType, "image/") {
			return compact.Part{}, false
		}
		return compact.Part{Type: compact.PartImage, Extra: jsonrec.Extras(p.fields, "inlineData"), Image: &compact.Image{MimeType: d.MimeType, Data: d.Data}}, true
	}
	return compact.Part{}, false
}

// orphanResult returns the harness note that stands for fr, a function
// response whose call the file does not hold (see compact.OrphanResult).
func orphanResult(fr functionResponse, ts int64) *compact.Message {
	return compact.OrphanResult(Format, responseResult(fr, fr.ID, fr.Name, ts))
}

// responseResult maps a functionResponse part, in a recording or a
// checkpoint, onto the tool result message of call id to tool: the
// response's text (see responseText), IsError for an error member, the
// rest of the response in Extra["response"].
func responseResult(fr functionResponse, id, tool string, ts int64) *compact.Message {
	text, isErr, rest := responseText(fr.Response)
	res := &compact.Message{Role: compact.RoleToolResult, ToolCallID: id, ToolName: tool, IsError: isErr,
		Content: []compact.Part{{Type: compact.PartText, Text: text}}, Timestamp: ts}
	if rest != nil {
		res.Extra = map[string]json.RawMessage{"response": rest}
	}
	return res
}

// callPart maps a functionCall part, in a recording or a checkpoint,
// onto a tool-call part with the given id: its args as Arguments (see
// objectArgs), the part's other members in Extra.
func callPart(p part, fc functionCall, id string) compact.Part {
	return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: fc.Name, Arguments: objectArgs(fc.Args)},
		Extra: jsonrec.Extras(p.fields, "functionCall")}
}

// responseText returns the text of a function response: its output (or
// error) member when it is a string, else the response object as JSON.
// isErr reports an error member; rest holds the response when it has more
// than the member used.
func responseText(raw json.RawMessage) (text string, isErr bool, rest json.RawMessage) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		if len(raw) == 0 || string(raw) == "null" {
			return "", false, nil
		}
		return string(raw), false, nil
	}
	for _, k := range []string{"output", "error"} {
		v, ok := obj[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			continue
		}
		if len(obj) > 1 {
			rest = raw
		}
		return s, k == "error", rest
	}
	return string(raw), false, nil
}

// objectArgs returns args when it is a JSON object, {} when absent, and
// {"args": args} otherwise.
func objectArgs(args json.RawMessage) json.RawMessage {
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "null":
		return json.RawMessage(`{}`)
	case args[0] == '{':
		return args
	}
	out, _ := json.Marshal(map[string]json.RawMessage{"args": args})
	return out
}

// unknownExtra holds the parts a message could not map, as stored, in
// Extra["unknownParts"]; nil when there are none.
func unknownExtra(unknown []json.RawMessage) map[string]json.RawMessage {
	if len(unknown) == 0 {
		return nil
	}
	b, _ := json.Marshal(unknown)
	return map[string]json.RawMessage{"unknownParts": b}
}
