package openhands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// builder holds the state of one conversion of events into entries.
type builder struct {
	name string
	t    *compact.Transcript
	// ids maps event ids to entry ids.
	ids   map[int64]string
	taken map[string]bool
	// responses maps a model_response id to its assistant message.
	responses map[string]*pending
	// calls maps tool call ids to tool names.
	calls map[string]string
	// bash maps the id of a command the user ran to its message.
	bash map[int64]*compact.Message
	// compactions waiting for their first kept entry.
	compactions []*openCompaction
	lastUsage   *compact.Usage
}

// pending is an assistant message being filled by the actions of one
// model response.
type pending struct {
	msg    *compact.Message
	events []json.RawMessage
}

// build turns the events read from a stream named name into the
// transcript's entries, in order. An event that does not decode or map is
// an error naming its file, line and index.
func build(raws []rawEvent, name string) (*compact.Transcript, error) {
	c := &builder{name: name, t: &compact.Transcript{Format: Format, Unknown: map[string]int{}},
		ids: map[int64]string{}, taken: map[string]bool{}, responses: map[string]*pending{},
		calls: map[string]string{}, bash: map[int64]*compact.Message{}}
	for i, r := range raws {
		ev, err := parseEvent(r)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: event %d%w", r.name, r.line, i, err)
		}
		if err := c.event(ev); err != nil {
			return nil, fmt.Errorf("%s:%d: event %d%w", r.name, r.line, i, err)
		}
	}
	for _, p := range c.responses {
		events, _ := json.Marshal(p.events)
		p.msg.Extra = jsonrec.Set(p.msg.Extra, "openhandsEvents", events)
	}
	c.resolveCompactions()
	if len(c.t.Entries) > 0 {
		c.t.Timestamp = c.t.Entries[0].Timestamp
	}
	jsonrec.SafeExtras(c.t, Format)
	jsonrec.OneLine(c.t)
	return c.t, nil
}

// add appends an entry for ev, named after the event's id when it is
// unique.
func (c *builder) add(ev *event, e *compact.Entry) {
	e.Timestamp = timestamp(ev.timestamp)
	if e.Message != nil && e.Timestamp != "" {
		if ts, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
			e.Message.Timestamp = ts.UnixMilli()
		}
	}
	id := ""
	if ev.hasID {
		id = strconv.FormatInt(ev.id, 10)
	}
	if id == "" || c.taken[id] {
		id = fmt.Sprintf("e%d", len(c.t.Entries)+1)
		for c.taken[id] {
			id += "x"
		}
	}
	e.ID = id
	c.taken[id] = true
	if ev.hasID {
		if _, ok := c.ids[ev.id]; !ok {
			c.ids[ev.id] = id
		}
	}
	c.t.Entries = append(c.t.Entries, e)
}

func (c *builder) message(ev *event, m *compact.Message) {
	c.add(ev, &compact.Entry{Kind: compact.KindMessage, Message: m})
}

func (c *builder) custom(ev *event, typ string) {
	c.add(ev, &compact.Entry{Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":" + typ, Data: ev.raw}})
}

// event maps one event. Errors start with the path inside it.
func (c *builder) event(ev *event) error {
	switch {
	case ev.action != "":
		if !knownActions[ev.action] {
			c.t.Unknown[ev.action]++
		}
		return c.actionEvent(ev)
	case ev.observation != "":
		if !knownObservations[ev.observation] {
			c.t.Unknown[ev.observation]++
		}
		return c.observationEvent(ev)
	}
	c.t.Unknown["event"]++
	c.custom(ev, "event")
	return nil
}

func (c *builder) actionEvent(ev *event) error {
	if ev.meta != nil && ev.source != "user" {
		return c.toolAction(ev)
	}
	switch {
	case ev.action == "message":
		return c.messageAction(ev)
	case ev.action == "condensation":
		return c.condensation(ev)
	case ev.action == "run" && ev.source == "user":
		var cmd string
		if err := jsonrec.String(ev.args, "command", &cmd); err != nil {
			return fmt.Errorf(".args%w", err)
		}
		m := &compact.Message{Role: compact.RoleBash, Extra: map[string]json.RawMessage{"openhandsEvent": ev.raw}, Meta: &compact.MessageMeta{Command: cmd}}
		if ev.hasID {
			c.bash[ev.id] = m
		}
		c.message(ev, m)
		return nil
	case ev.source == "agent" && (ev.action == "finish" || ev.action == "reject" || ev.action == "think"):
		// Without tool_call_metadata (agents that do not call functions):
		// the agent's words, as OpenHands shows them to the model.
		text := ""
		for _, k := range [...]string{"final_thought", "thought"} {
			if err := jsonrec.String(ev.args, k, &text); err != nil {
				return fmt.Errorf(".args%w", err)
			}
			if text != "" {
				break
			}
		}
		if text == "" {
			_ = jsonrec.String(ev.f, "message", &text)
		}
		part := compact.Part{Type: compact.PartText, Text: text}
		if ev.action == "think" {
			part = compact.Part{Type: compact.PartThinking, Thinking: text}
		}
		c.message(ev, &compact.Message{Role: compact.RoleAssistant, Content: []compact.Part{part}, StopReason: compact.StopEnd,
			Extra: map[string]json.RawMessage{"openhandsEvent": ev.raw}})
		return nil
	}
	c.custom(ev, ev.action)
	return nil
}

// toolAction adds an agent action the model called as a tool to the
// assistant message of its model response, making that message on the
// response's first action.
func (c *builder) toolAction(ev *event) error {
	var resp modelResponse
	if len(ev.meta.ModelResponse) > 0 && !jsonrec.IsNull(ev.meta.ModelResponse) {
		if err := json.Unmarshal(ev.meta.ModelResponse, &resp); err != nil {
			return fmt.Errorf(".tool_call_metadata.model_response: %v", err)
		}
	}
	p := c.responses[resp.ID]
	if p == nil || resp.ID == "" {
		m, err := c.responseMessage(ev, &resp)
		if err != nil {
			return err
		}
		p = &pending{msg: m}
		if resp.ID != "" {
			c.responses[resp.ID] = p
		} else {
			c.responses[fmt.Sprintf("\x00%d", len(c.t.Entries))] = p
		}
		c.message(ev, m)
	}
	p.events = append(p.events, ev.raw)
	// A call the response does not list (a response stored without its
	// tool calls) is made from the action itself.
	if _, ok := c.calls[ev.meta.ToolCallID]; !ok {
		args := json.RawMessage("{}")
		if raw, ok := ev.f["args"]; ok && !jsonrec.IsNull(raw) {
			args = raw
		}
		tc := &compact.ToolCall{ID: ev.meta.ToolCallID, Name: ev.meta.FunctionName, Arguments: args}
		c.calls[tc.ID] = tc.Name
		p.msg.Content = append(p.msg.Content, compact.Part{Type: compact.PartToolCall, ToolCall: tc,
			Extra: map[string]json.RawMessage{"fromAction": json.RawMessage("true")}})
		p.msg.StopReason = compact.StopToolUse
	}
	return nil
}

// responseMessage is the assistant message of a model response: its
// reasoning, its text (else the action's thought), its tool calls, its
// usage.
func (c *builder) responseMessage(ev *event, resp *modelResponse) (*compact.Message, error) {
	m := &compact.Message{Role: compact.RoleAssistant, Model: resp.Model, StopReason: compact.StopEnd}
	if resp.Model != "" {
		if c.t.Model == "" {
			c.t.Model = resp.Model
		}
	}
	text := ""
	if len(resp.Choices) > 0 {
		ch := resp.Choices[0]
		if ch.Message.ReasoningContent != "" {
			m.Content = append(m.Content, compact.Part{Type: compact.PartThinking, Thinking: ch.Message.ReasoningContent})
		}
		text = contentText(ch.Message.Content)
		switch ch.FinishReason {
		case "length", "max_tokens":
			m.StopReason = compact.StopLength
		}
	} else {
		_ = jsonrec.String(ev.args, "thought", &text)
	}
	if strings.TrimSpace(text) != "" {
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: text})
	}
	if len(resp.Choices) > 0 {
		for j, call := range resp.Choices[0].Message.ToolCalls {
			if call.ID == "" {
				return nil, fmt.Errorf(".tool_call_metadata.model_response.choices[0].message.tool_calls[%d].id: missing", j)
			}
			args := bytes.TrimSpace(call.Function.Arguments)
			if len(args) == 0 || args[0] != '{' {
				var s string
				_ = json.Unmarshal(args, &s)
				var ok bool
				if args, ok = jsonrec.Arguments(s); !ok {
					c.t.Warnings = append(c.t.Warnings, jsonrec.ArgumentsWarning(fmt.Sprintf("%s:%d", ev.name, ev.line), call.ID))
				}
			}
			tc := &compact.ToolCall{ID: call.ID, Name: call.Function.Name, Arguments: json.RawMessage(args)}
			c.calls[tc.ID] = tc.Name
			m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: tc})
		}
	}
	if len(m.ToolCalls()) > 0 {
		m.StopReason = compact.StopToolUse
	}
	if u := resp.Usage; u != nil {
		usage := u.usage()
		m.Usage = &usage
		c.lastUsage = m.Usage
	}
	return m, nil
}

// messageAction maps a message action: the user's or the agent's words,
// with their images.
func (c *builder) messageAction(ev *event) error {
	var text string
	if err := jsonrec.String(ev.args, "content", &text); err != nil {
		return fmt.Errorf(".args%w", err)
	}
	m := &compact.Message{Role: compact.RoleUser, Extra: map[string]json.RawMessage{"openhandsEvent": ev.raw}}
	if ev.source == "agent" {
		m.Role, m.StopReason = compact.RoleAssistant, compact.StopEnd
	}
	if text != "" || ev.args["image_urls"] == nil {
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: text})
	}
	if raw := ev.args["image_urls"]; !jsonrec.IsNull(raw) && raw != nil {
		var urls []string
		if err := json.Unmarshal(raw, &urls); err != nil {
			return fmt.Errorf(".args.image_urls: not an array of strings")
		}
		for _, u := range urls {
			if mime, data, ok := jsonrec.SplitDataURL(u); ok {
				m.Content = append(m.Content, compact.Part{Type: compact.PartImage, Image: &compact.Image{MimeType: mime, Data: data}})
			} else {
				m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: "[image: " + u + "]"})
			}
		}
	}
	c.message(ev, m)
	return nil
}

func (c *builder) observationEvent(ev *event) error {
	var content string
	if err := jsonrec.String(ev.f, "content", &content); err != nil {
		return err
	}
	if c.t.Cwd == "" {
		var extras struct {
			Metadata struct {
				WorkingDir string `json:"working_dir"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(ev.f["extras"], &extras)
		c.t.Cwd = extras.Metadata.WorkingDir
	}
	rest, _ := json.Marshal(jsonrec.Extras(ev.f, "content"))
	if ev.meta != nil {
		m := &compact.Message{Role: compact.RoleToolResult, ToolCallID: ev.meta.ToolCallID, ToolName: ev.meta.FunctionName,
			Content: []compact.Part{{Type: compact.PartText, Text: content}}, Extra: map[string]json.RawMessage{"openhandsEvent": rest}}
		m.IsError = ev.observation == "error" || string(bytes.TrimSpace(ev.f["success"])) == "false"
		if name, ok := c.calls[m.ToolCallID]; ok {
			if m.ToolName == "" {
				m.ToolName = name
			}
			c.message(ev, m)
			return nil
		}
		c.t.Warnings = append(c.t.Warnings, fmt.Sprintf("%s:%d: tool result for call %q, which the stream does not hold: kept as a harness note", ev.name, ev.line, m.ToolCallID))
		c.message(ev, compact.OrphanResult(Format, m))
		return nil
	}
	if ev.hasCause {
		if b := c.bash[ev.cause]; b != nil {
			// b was made with its MessageMeta (the command).
			b.Meta.Output = content
			var extras struct {
				ExitCode *int `json:"exit_code"`
				Metadata struct {
					ExitCode *int `json:"exit_code"`
				} `json:"metadata"`
			}
			_ = json.Unmarshal(ev.f["extras"], &extras)
			b.Meta.ExitCode = extras.Metadata.ExitCode
			if b.Meta.ExitCode == nil {
				b.Meta.ExitCode = extras.ExitCode
			}
			b.Extra["openhandsObservation"] = ev.raw
			return nil
		}
	}
	switch {
	case ev.observation == "condense":
		c.compaction(ev, content, -1, map[string]any{"source": Format, "observation": "condense"})
		return nil
	case hiddenObservations[ev.observation] || !knownObservations[ev.observation]:
		c.custom(ev, ev.observation)
		return nil
	}
	c.message(ev, &compact.Message{Role: compact.RoleUser, Content: []compact.Part{{Type: compact.PartText, Text: content}},
		Extra: map[string]json.RawMessage{"openhandsEvent": rest}})
	return nil
}

// timestamp returns an event timestamp as RFC 3339 in UTC with
// milliseconds, as pi writes them; OpenHands writes local ISO 8601 times
// without a zone, read here as UTC. A time it cannot read is kept as
// stored.
func timestamp(s string) string {
	if s == "" {
		return ""
	}
	for _, layout := range [...]string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return jsonrec.Stamp(t)
		}
	}
	return s
}
