package session

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// The wire types mirror pi's JSON. They make the reference path for
// decoding entry lines, which goes through goccy/go-json (several times
// faster than encoding/json on these files): the fast path in fast.go
// decodes what pi writes without them, and leaves every line it cannot
// decode exactly like this path to it. Encoding new entries uses the
// standard library, since it happens one line at a time.

type wireEntry struct {
	wireFields
	Message *wireMessage `json:"message"`
}

// wireEntryText is wireEntry for messages whose content is a string.
type wireEntryText struct {
	wireFields
	Message *wireMessageText `json:"message"`
}

// wireFields are the entry fields other than the message.
type wireFields struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`
	Timestamp string  `json:"timestamp"`

	// context_edit
	Strategy       string     `json:"strategy"`
	Edits          []wireEdit `json:"edits"`
	TokensFreed    int        `json:"tokensFreed"`
	FirstChangedID string     `json:"firstChangedId"`

	// compaction and branch_summary
	Summary             string          `json:"summary"`
	FirstKeptEntryID    string          `json:"firstKeptEntryId"`
	FirstKeptEntryIndex *int            `json:"firstKeptEntryIndex"`
	TokensBefore        int             `json:"tokensBefore"`
	TokensAfter         int             `json:"tokensAfter"`
	Details             json.RawMessage `json:"details"`
	FromHook            bool            `json:"fromHook"`
	FromID              string          `json:"fromId"`

	// model_change, thinking_level_change
	Provider      string `json:"provider"`
	ModelID       string `json:"modelId"`
	ThinkingLevel string `json:"thinkingLevel"`

	// label, session_info, custom, custom_message
	TargetID   string          `json:"targetId"`
	Label      *string         `json:"label"`
	Name       string          `json:"name"`
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data"`
	Content    json.RawMessage `json:"content"`

	// session header
	Version       int    `json:"version"`
	Cwd           string `json:"cwd"`
	ParentSession string `json:"parentSession"`
}

type wireUsage struct {
	Input       int `json:"input"`
	Output      int `json:"output"`
	CacheRead   int `json:"cacheRead"`
	CacheWrite  int `json:"cacheWrite"`
	TotalTokens int `json:"totalTokens"`
	// CacheWrite1h is compact.Usage.CacheWrite1h, written only when not
	// 0 (pi does not write it; a file imported from Claude Code keeps
	// its one-hour cache writes).
	CacheWrite1h int `json:"cacheWrite1h,omitempty"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Data      string          `json:"data"`
	MimeType  string          `json:"mimeType"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// wireMessage decodes content as blocks; wireMessageText is the fallback
// for the (user and custom) messages whose content is a plain string.
type wireMessage struct {
	wireMessageFields
	Content []wireBlock `json:"content"`
}

type wireMessageText struct {
	wireMessageFields
	Content string `json:"content"`
}

type wireMessageFields struct {
	Role               string     `json:"role"`
	Usage              *wireUsage `json:"usage"`
	StopReason         string     `json:"stopReason"`
	Provider           string     `json:"provider"`
	Model              string     `json:"model"`
	ErrorMessage       string     `json:"errorMessage"`
	ToolCallID         string     `json:"toolCallId"`
	ToolName           string     `json:"toolName"`
	IsError            bool       `json:"isError"`
	Command            string     `json:"command"`
	Output             string     `json:"output"`
	ExitCode           *int       `json:"exitCode"`
	Cancelled          bool       `json:"cancelled"`
	ExcludeFromContext bool       `json:"excludeFromContext"`
	CustomType         string     `json:"customType"`
	Timestamp          float64    `json:"timestamp"`
}

// decodeEntry parses one line with unmarshal (goccy/go-json's on the
// reference path; see ParseWith for others). Content that is a string
// instead of a block list is handled by a second decode into
// wireEntryText. A line that still fails is decoded once more with only
// the members its kind uses (see kindFields), so that a field this
// package does not read, of an unknown entry type say, cannot make the
// line malformed.
func decodeEntry(line []byte, unmarshal func([]byte, any) error) (*wireEntry, error) {
	w, err := decodeWire(line, unmarshal)
	if err == nil {
		return w, nil
	}
	if narrow := kindMembers(line); narrow != nil {
		if w, err2 := decodeWire(narrow, unmarshal); err2 == nil {
			return w, nil
		} else {
			err = err2
		}
	}
	return nil, cleanJSONError(err)
}

func decodeWire(line []byte, unmarshal func([]byte, any) error) (*wireEntry, error) {
	var w wireEntry
	err := unmarshal(line, &w)
	if err == nil {
		return &w, nil
	}
	var t wireEntryText
	err2 := unmarshal(line, &t)
	if err2 == nil && t.Message != nil {
		w = wireEntry{wireFields: t.wireFields, Message: &wireMessage{wireMessageFields: t.Message.wireMessageFields}}
		w.Message.Content = []wireBlock{{Type: "text", Text: t.Message.Content}}
		return &w, nil
	}
	if field, _, _, ok := typeError(err); ok && field == "message.content" && err2 != nil {
		// The content is a string, which is allowed: the fault is
		// elsewhere, and the second decode names it.
		return nil, err2
	}
	return nil, err
}

// kindFields lists the members each known entry kind is read from, beside
// type, id, parentId and timestamp. Entries of other types use only those
// four.
var kindFields = map[compact.EntryKind][]string{
	compact.KindMessage:             {"message"},
	compact.KindCompaction:          {"summary", "firstKeptEntryId", "firstKeptEntryIndex", "tokensBefore", "tokensAfter", "details", "fromHook"},
	compact.KindBranchSummary:       {"summary", "fromId"},
	compact.KindModelChange:         {"provider", "modelId"},
	compact.KindThinkingLevelChange: {"thinkingLevel"},
	compact.KindCustom:              {"customType", "data"},
	compact.KindCustomMessage:       {"customType", "content"},
	compact.KindLabel:               {"targetId", "label"},
	compact.KindSessionInfo:         {"name"},
	compact.KindContextEdit:         {"strategy", "edits", "tokensFreed", "firstChangedId"},
}

// wireEdit is one replacement of a context_edit entry.
type wireEdit struct {
	TargetID string      `json:"targetId"`
	Content  []wireBlock `json:"content"`
}

// kindMembers returns the line reduced to the members its entry kind is
// read from, or nil when the line is not a JSON object with a string type.
func kindMembers(line []byte) []byte {
	fields, err := splitObject(line)
	if err != nil {
		return nil
	}
	var typ string
	for _, f := range fields {
		if f.key == "type" {
			if stdjson.Unmarshal(f.val, &typ) != nil {
				return nil
			}
		}
	}
	if typ == "" || typ == "session" {
		return nil
	}
	keep := map[string]bool{"type": true, "id": true, "parentId": true, "timestamp": true}
	for _, k := range kindFields[compact.EntryKind(typ)] {
		keep[k] = true
	}
	out := fields[:0]
	for _, f := range fields {
		if keep[f.key] {
			out = append(out, f)
		}
	}
	return joinObject(out)
}

// typeError unpacks a decoder's error about a member of the wrong kind,
// from either JSON package: the member's path, the kind wanted in words
// and the value found.
func typeError(err error) (field, want, have string, ok bool) {
	var std *stdjson.UnmarshalTypeError
	var fast *json.UnmarshalTypeError
	switch {
	case errors.As(err, &std) && std.Field != "":
		return memberPath(std.Field), jsonrec.KindName(std.Type), std.Value, true
	case errors.As(err, &fast) && fast.Field != "":
		return memberPath(fast.Field), jsonrec.KindName(fast.Type), fast.Value, true
	}
	return "", "", "", false
}

// memberPath turns a decoder's path to a member, "message.content.0.text",
// into the file's terms, "message.content[0].text": array indexes in
// brackets, without the names of this package's embedded structs.
func memberPath(p string) string {
	var b strings.Builder
	for _, seg := range strings.Split(p, ".") {
		switch {
		case strings.HasPrefix(seg, "wire"):
			continue
		case seg != "" && strings.Trim(seg, "0123456789") == "":
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// cleanJSONError shortens decoder errors to their cause: a member of the
// wrong kind as "field F: want K, have V" (see jsonrec.KindName), any
// other error as invalid JSON.
func cleanJSONError(err error) error {
	if field, want, have, ok := typeError(err); ok {
		return fmt.Errorf("field %s: want %s, have %s", field, want, have)
	}
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return fmt.Errorf("invalid JSON: %s", msg)
}

func (b *wireBlock) part() compact.Part {
	switch b.Type {
	case "text":
		return compact.Part{Type: compact.PartText, Text: b.Text}
	case "thinking":
		return compact.Part{Type: compact.PartThinking, Thinking: b.Thinking}
	case "image":
		return compact.Part{Type: compact.PartImage, Image: &compact.Image{Data: b.Data, MimeType: b.MimeType}}
	case "toolCall":
		args := b.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		return compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: b.ID, Name: b.Name, Arguments: args}}
	}
	return compact.Part{Type: compact.PartType(b.Type), Text: b.Text}
}

func (w *wireMessage) message() *compact.Message {
	m := &compact.Message{Role: compact.Role(w.Role), StopReason: compact.StopReason(w.StopReason), Provider: w.Provider,
		Model: w.Model, ToolCallID: w.ToolCallID, ToolName: w.ToolName, IsError: w.IsError, Timestamp: int64(w.Timestamp)}
	meta := compact.MessageMeta{ErrorMessage: w.ErrorMessage, Command: w.Command, Output: w.Output, ExitCode: w.ExitCode,
		Cancelled: w.Cancelled, ExcludeFromContext: w.ExcludeFromContext, CustomType: w.CustomType}
	if !meta.IsZero() {
		m.Meta = &meta
	}
	if m.Role == "hookMessage" { // v2 name of the custom role
		m.Role = compact.RoleCustom
	}
	if len(w.Content) > 0 {
		m.Content = make([]compact.Part, len(w.Content))
		for i := range w.Content {
			m.Content[i] = w.Content[i].part()
		}
	}
	if w.Usage != nil {
		m.Usage = &compact.Usage{Input: w.Usage.Input, Output: w.Usage.Output, CacheRead: w.Usage.CacheRead,
			CacheWrite: w.Usage.CacheWrite, Total: w.Usage.TotalTokens, CacheWrite1h: w.Usage.CacheWrite1h}
	}
	return m
}

// customContent decodes the content of a custom_message entry: a string
// or a list of text and image blocks.
func customContent(raw json.RawMessage) ([]compact.Part, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []compact.Part{{Type: compact.PartText, Text: s}}, nil
	}
	var blocks []wireBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	parts := make([]compact.Part, len(blocks))
	for i := range blocks {
		parts[i] = blocks[i].part()
	}
	return parts, nil
}

type wireDetails struct {
	ReadFiles     []string `json:"readFiles"`
	ModifiedFiles []string `json:"modifiedFiles"`
}

// toEntry converts a decoded line into a domain entry. It checks the
// fields each kind needs and names the missing one.
func (w *wireEntry) toEntry() (*compact.Entry, error) {
	e := &compact.Entry{ID: w.ID, Kind: compact.EntryKind(w.Type), Timestamp: w.Timestamp}
	if w.ParentID != nil {
		e.ParentID = *w.ParentID
	}
	switch e.Kind {
	case compact.KindMessage:
		if w.Message == nil {
			return nil, fmt.Errorf("field message: missing")
		}
		if w.Message.Role == "" {
			return nil, fmt.Errorf("field message.role: missing")
		}
		e.Message = w.Message.message()
	case compact.KindContextEdit:
		ce := &compact.ContextEdit{Strategy: w.Strategy, TokensFreed: w.TokensFreed, FirstChangedID: w.FirstChangedID}
		for i, we := range w.Edits {
			if we.TargetID == "" {
				return nil, fmt.Errorf("field edits[%d].targetId: missing", i)
			}
			ed := compact.Edit{TargetID: we.TargetID, Content: make([]compact.Part, len(we.Content))}
			for j := range we.Content {
				ed.Content[j] = we.Content[j].part()
			}
			ce.Edits = append(ce.Edits, ed)
		}
		e.Edit = ce
	default:
		b := entryBody{summary: w.Summary, firstKeptID: w.FirstKeptEntryID, tokensBefore: w.TokensBefore,
			tokensAfter: w.TokensAfter, fromHook: w.FromHook, details: w.Details, fromID: w.FromID,
			customType: w.CustomType, content: w.Content, provider: w.Provider, modelID: w.ModelID,
			thinkingLevel: w.ThinkingLevel, targetID: w.TargetID, name: w.Name, data: w.Data}
		if w.Label != nil {
			b.label, b.hasLabel = *w.Label, true
		}
		if err := b.fill(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// entryBody holds the fields of an entry line that the kinds other than
// message and context_edit are built from. Both decoders read a line into
// one, the reference path (toEntry) and the fast one (fastDecoder.fast),
// so that fill maps pi's entry kinds onto compact.Entry in one place.
type entryBody struct {
	// compaction and branch_summary
	summary, firstKeptID      string
	tokensBefore, tokensAfter int
	fromHook                  bool
	details                   []byte
	fromID                    string
	// model_change, thinking_level_change
	provider, modelID, thinkingLevel string
	// label, session_info, custom, custom_message
	targetID, label, name, customType string
	hasLabel                          bool // label is set, even to ""
	content, data                     []byte
}

// fill sets what an entry of e.Kind carries, for every kind but message
// and context_edit (a kind it does not know gets nothing: it is
// metadata). The one error is a custom_message content that is neither a
// string nor a list of blocks.
func (b *entryBody) fill(e *compact.Entry) error {
	switch e.Kind {
	case compact.KindCompaction:
		c := &compact.Compaction{Summary: b.summary, FirstKeptID: b.firstKeptID, TokensBefore: b.tokensBefore,
			TokensAfter: b.tokensAfter, FromHook: b.fromHook}
		compactionDetails(c, b.details)
		e.Compaction = c
	case compact.KindBranchSummary:
		// Entry has no field of its own for fromId; TargetID holds it, as
		// encodeEntry expects.
		e.Meta = &compact.EntryMeta{TargetID: b.fromID}
		if b.summary != "" {
			e.Message = compact.TextMessage(compact.RoleBranchSummary, b.summary)
		}
	case compact.KindCustomMessage:
		parts, err := customContent(b.content)
		if err != nil {
			return fmt.Errorf("field content: %w", err)
		}
		e.Meta = &compact.EntryMeta{CustomType: b.customType}
		e.Message = &compact.Message{Role: compact.RoleCustom, Content: parts, Meta: &compact.MessageMeta{CustomType: b.customType}}
	case compact.KindModelChange:
		e.Meta = &compact.EntryMeta{Provider: b.provider, ModelID: b.modelID}
	case compact.KindThinkingLevelChange:
		e.Meta = &compact.EntryMeta{ThinkingLevel: b.thinkingLevel}
	case compact.KindLabel:
		e.Meta = &compact.EntryMeta{TargetID: b.targetID}
		if b.hasLabel {
			e.Meta.Label = b.label
		}
	case compact.KindSessionInfo:
		e.Meta = &compact.EntryMeta{Name: b.name}
	case compact.KindCustom:
		e.Meta = &compact.EntryMeta{CustomType: b.customType}
		if len(b.data) > 0 {
			e.Meta.Data = b.data
		}
	}
	return nil
}

// compactionDetails fills the file lists and Details of c from the stored
// details object (raw, possibly empty or null).
func compactionDetails(c *compact.Compaction, raw []byte) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var d wireDetails
	if json.Unmarshal(raw, &d) == nil && (d.ReadFiles != nil || d.ModifiedFiles != nil) {
		c.ReadFiles, c.ModifiedFiles, c.HasFileDetails = d.ReadFiles, d.ModifiedFiles, true
	}
	var all map[string]any
	if stdjson.Unmarshal(raw, &all) == nil {
		delete(all, "readFiles")
		delete(all, "modifiedFiles")
		if len(all) > 0 {
			c.Details = all
		}
	}
}
