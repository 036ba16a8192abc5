package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// readCheckpoint reads a checkpoint written by /chat save: the chat
// history as Gemini API Content objects {role: "user"|"model", parts},
// either a bare array (older versions) or {history: [...], authType}.
// Model parts map as in recordings; functionCall parts become tool calls
// and the functionResponse parts of the next user content their results,
// paired by id or, for calls without one, by name in order. Checkpoints
// hold no times, ids or usage.
func readCheckpoint(data []byte, name string) (*compact.Transcript, error) {
	t := &compact.Transcript{Format: Format, Unknown: map[string]int{}}
	trimmed := bytes.TrimSpace(data)
	var list json.RawMessage = trimmed
	if trimmed[0] == '{' {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return nil, fmt.Errorf("%s:1: %w", name, err)
		}
		list = obj["history"]
		for k, v := range obj {
			obj[k] = compactJSON(v)
		}
		rest := jsonrec.Extras(obj, "history")
		if len(rest) > 0 {
			d, _ := json.Marshal(rest)
			t.Entries = append(t.Entries, &compact.Entry{ID: "checkpoint", Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":checkpoint", Data: d}})
		}
	}
	var contents []json.RawMessage
	if err := json.Unmarshal(list, &contents); err != nil {
		return nil, fmt.Errorf("%s:%d: history: not an array", name, jsonrec.Line(data, bytes.Index(data, list)))
	}
	c := &builder{name: name, t: t, calls: map[string]string{}, answered: map[string]bool{}, used: map[string]bool{}}
	var open []string // ids of calls not yet answered, in order
	for i, raw := range contents {
		raw = compactJSON(raw)
		var content struct {
			Role  string          `json:"role"`
			Parts json.RawMessage `json:"parts"`
		}
		if err := json.Unmarshal(raw, &content); err != nil {
			return nil, fmt.Errorf("%s: content %d: %s", name, i+1, fieldError(err))
		}
		parts, err := decodeParts(content.Parts)
		if err != nil {
			return nil, fmt.Errorf("%s: content %d: field parts: %w", name, i+1, err)
		}
		id := fmt.Sprintf("c%d", i)
		switch content.Role {
		case "model":
			msg := &compact.Message{Role: compact.RoleAssistant, Provider: "google", StopReason: compact.StopEnd}
			var unknown []json.RawMessage
			for k, p := range parts {
				if addContent(msg, p) {
					continue
				}
				var fc functionCall
				if p.has("functionCall") && json.Unmarshal(p.fields["functionCall"], &fc) == nil && fc.Name != "" {
					callID := fc.ID
					if callID == "" || c.calls[callID] != "" {
						callID = fmt.Sprintf("%s-call-%d", id, k+1)
					}
					msg.Content = append(msg.Content, callPart(p, fc, callID))
					c.calls[callID] = fc.Name
					open = append(open, callID)
					msg.StopReason = compact.StopToolUse
					continue
				}
				unknown = append(unknown, p.raw)
				t.Unknown["part:"+p.kind()]++
			}
			msg.Extra = unknownExtra(unknown)
			t.Entries = append(t.Entries, &compact.Entry{ID: c.id(id), Kind: compact.KindMessage, Message: msg})
		case "user":
			msg := &compact.Message{Role: compact.RoleUser}
			var unknown []json.RawMessage
			var results []*compact.Message
			for _, p := range parts {
				if addContent(msg, p) {
					continue
				}
				var fr functionResponse
				if p.has("functionResponse") && json.Unmarshal(p.fields["functionResponse"], &fr) == nil {
					callID := ""
					for j, o := range open {
						if o == fr.ID || (fr.ID == "" || c.calls[fr.ID] == "") && c.calls[o] == fr.Name {
							callID = o
							open = append(open[:j:j], open[j+1:]...)
							break
						}
					}
					if callID == "" {
						c.warn("%s: content %d: functionResponse %q (%s) has no earlier call; kept as a harness note", name, i+1, fr.ID, fr.Name)
						results = append(results, orphanResult(fr, 0))
						continue
					}
					results = append(results, responseResult(fr, callID, c.calls[callID], 0))
					continue
				}
				unknown = append(unknown, p.raw)
				t.Unknown["part:"+p.kind()]++
			}
			msg.Extra = unknownExtra(unknown)
			markSetup(msg)
			for k, res := range results {
				t.Entries = append(t.Entries, &compact.Entry{ID: c.id(fmt.Sprintf("%s.%d", id, k)), Kind: compact.KindMessage, Message: res})
			}
			if len(msg.Content) > 0 || len(results) == 0 {
				t.Entries = append(t.Entries, &compact.Entry{ID: c.id(id), Kind: compact.KindMessage, Message: msg})
			}
		default:
			t.Unknown["role:"+content.Role]++
			t.Entries = append(t.Entries, &compact.Entry{ID: c.id(id), Kind: compact.KindCustom, Meta: &compact.EntryMeta{CustomType: Format + ":content", Data: raw}})
		}
	}
	if len(t.Unknown) == 0 {
		t.Unknown = nil
	}
	return t, nil
}
