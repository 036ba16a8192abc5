package extractive

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/compactkit/compact"
)

// The fixtures are decoded here rather than with the session package so
// that these tests depend on nothing but the root package. The decoder
// reads only the fields the summarizer and the planner use.

type wireLine struct {
	Type                string          `json:"type"`
	ID                  string          `json:"id"`
	ParentID            *string         `json:"parentId"`
	Message             *wireMessage    `json:"message"`
	Summary             string          `json:"summary"`
	FirstKeptEntryID    string          `json:"firstKeptEntryId"`
	FirstKeptEntryIndex *int            `json:"firstKeptEntryIndex"`
	TokensBefore        int             `json:"tokensBefore"`
	Details             json.RawMessage `json:"details"`
}

type wireMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	ToolCallID   string          `json:"toolCallId"`
	ToolName     string          `json:"toolName"`
	IsError      bool            `json:"isError"`
	Details      json.RawMessage `json:"details"`
	Command      string          `json:"command"`
	Output       string          `json:"output"`
	ExitCode     *int            `json:"exitCode"`
	Cancelled    bool            `json:"cancelled"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	Provider     string          `json:"provider"`
	Model        string          `json:"model"`
	Usage        *struct {
		Input       int `json:"input"`
		Output      int `json:"output"`
		CacheRead   int `json:"cacheRead"`
		CacheWrite  int `json:"cacheWrite"`
		TotalTokens int `json:"totalTokens"`
	} `json:"usage"`
}

type wirePart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Data      string          `json:"data"`
	MimeType  string          `json:"mimeType"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// loadFixture reads a pi session file into entries. Version 1 files have
// no ids: each entry gets the id "L<line index>" (the header is line 0,
// as in pi's firstKeptEntryIndex) and the previous entry as parent.
func loadFixture(t testing.TB, path string) []*compact.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var entries []*compact.Entry
	prev := ""
	for index := 0; sc.Scan(); index++ {
		var w wireLine
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			t.Fatalf("%s:%d: %v", path, index+1, err)
		}
		if w.Type == "session" {
			continue
		}
		e := &compact.Entry{ID: w.ID, Kind: compact.EntryKind(w.Type), ParentID: prev}
		if e.ID == "" {
			e.ID = "L" + strconv.Itoa(index)
		}
		if w.ParentID != nil {
			e.ParentID = *w.ParentID
		}
		switch w.Type {
		case "message":
			e.Message = decodeMessage(t, w.Message)
		case "compaction":
			c := &compact.Compaction{Summary: w.Summary, FirstKeptID: w.FirstKeptEntryID, TokensBefore: w.TokensBefore}
			if w.FirstKeptEntryIndex != nil {
				c.FirstKeptID = "L" + strconv.Itoa(*w.FirstKeptEntryIndex)
			}
			e.Compaction = c
		case "branch_summary":
			e.Message = compact.TextMessage(compact.RoleBranchSummary, w.Summary)
		}
		entries = append(entries, e)
		prev = e.ID
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

func decodeMessage(t testing.TB, w *wireMessage) *compact.Message {
	t.Helper()
	if w == nil {
		t.Fatal("message entry without message")
	}
	m := &compact.Message{
		Role: compact.Role(w.Role), ToolCallID: w.ToolCallID, ToolName: w.ToolName, IsError: w.IsError,
		Command: w.Command, Output: w.Output, ExitCode: w.ExitCode, Cancelled: w.Cancelled,
		StopReason: compact.StopReason(w.StopReason), ErrorMessage: w.ErrorMessage,
		Provider: w.Provider, Model: w.Model,
	}
	if w.Usage != nil {
		m.Usage = &compact.Usage{Input: w.Usage.Input, Output: w.Usage.Output, CacheRead: w.Usage.CacheRead,
			CacheWrite: w.Usage.CacheWrite, Total: w.Usage.TotalTokens}
	}
	if len(w.Details) > 0 {
		m.Extra = map[string]json.RawMessage{"details": w.Details}
	}
	var text string
	if json.Unmarshal(w.Content, &text) == nil {
		m.Content = []compact.Part{{Type: compact.PartText, Text: text}}
		return m
	}
	var parts []wirePart
	if len(w.Content) > 0 {
		if err := json.Unmarshal(w.Content, &parts); err != nil {
			t.Fatalf("content: %v", err)
		}
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: p.Text})
		case "thinking":
			m.Content = append(m.Content, compact.Part{Type: compact.PartThinking, Thinking: p.Thinking})
		case "image":
			m.Content = append(m.Content, compact.Part{Type: compact.PartImage, Data: p.Data, MimeType: p.MimeType})
		case "toolCall":
			m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall,
				ToolCall: &compact.ToolCall{ID: p.ID, Name: p.Name, Arguments: p.Arguments}})
		}
	}
	return m
}
