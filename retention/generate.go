package retention

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/session"
)

// Needles are the facts planted early in a generated session, where any
// compaction at the default budgets summarizes them: a summarizer that
// keeps them all scores 100% on them.
type Needles struct {
	// FirstRequest is the session's first user message.
	FirstRequest string `json:"firstRequest"`
	// Files are touched through file tools and shell commands.
	Files []string `json:"files"`
	// ErrorLines are the distinctive lines of failing outputs, one
	// printed by a command that exited 0.
	ErrorLines []string `json:"errorLines"`
	// Identifiers are written by the user and the assistant.
	Identifiers []string `json:"identifiers"`
}

// GeneratedSessions is how many sessions Generate writes.
const GeneratedSessions = 3

// Generate writes GeneratedSessions planted-needle sessions into dir (pi
// session files, needles-1.jsonl, ...) with, beside each, the facts
// planted in it (needles-1.needles.json). Each session is about 55,000
// tokens: the needles come first, then filler (long file reads and short
// turns without facts of their own) that pushes them into the
// summarized span at every default budget. The files are the same for
// the same version of this package. It returns the session files
// written.
func Generate(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for i := 1; i <= GeneratedSessions; i++ {
		t, n := NeedleSession(i)
		name := filepath.Join(dir, "needles-"+strconv.Itoa(i)+".jsonl")
		f, err := os.Create(name)
		if err != nil {
			return files, err
		}
		err = session.EncodeTranscript(f, t)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return files, fmt.Errorf("%s: %w", name, err)
		}
		data, err := json.MarshalIndent(n, "", "  ")
		if err != nil {
			return files, err
		}
		if err := os.WriteFile(strings.TrimSuffix(name, ".jsonl")+".needles.json", append(data, '\n'), 0o644); err != nil {
			return files, err
		}
		files = append(files, name)
	}
	return files, nil
}

// needleBuilder appends the messages of a generated session.
type needleBuilder struct {
	t    *compact.Transcript
	n    int
	call int
	when time.Time
}

func (b *needleBuilder) add(m *compact.Message) {
	b.n++
	b.when = b.when.Add(7 * time.Second)
	m.Timestamp = b.when.UnixMilli()
	b.t.Entries = append(b.t.Entries, &compact.Entry{
		ID: fmt.Sprintf("%08x", 0x1000+b.n), Kind: compact.KindMessage,
		Timestamp: jsonrec.Stamp(b.when), Message: m,
	})
}

func (b *needleBuilder) user(text string) { b.add(compact.TextMessage(compact.RoleUser, text)) }

// tool records an assistant message calling one tool, and its result.
func (b *needleBuilder) tool(text, name string, args map[string]any, output string, isError bool) {
	b.call++
	id := "call_" + strconv.Itoa(b.call)
	raw, _ := json.Marshal(args)
	m := &compact.Message{Role: compact.RoleAssistant, StopReason: compact.StopToolUse, Provider: "anthropic", Model: "claude-sonnet-4-5"}
	if text != "" {
		m.Content = append(m.Content, compact.Part{Type: compact.PartText, Text: text})
	}
	m.Content = append(m.Content, compact.Part{Type: compact.PartToolCall, ToolCall: &compact.ToolCall{ID: id, Name: name, Arguments: raw}})
	b.add(m)
	r := compact.TextMessage(compact.RoleToolResult, output)
	r.ToolCallID, r.ToolName, r.IsError = id, name, isError
	b.add(r)
}

func (b *needleBuilder) say(text string) {
	m := compact.TextMessage(compact.RoleAssistant, text)
	m.StopReason, m.Provider, m.Model = compact.StopEnd, "anthropic", "claude-sonnet-4-5"
	b.add(m)
}

// fillerWords make text without identifiers: no digits, no backticks.
var fillerWords = strings.Fields("the ledger keeps every entry balanced while the service reads accounts " +
	"and writes journals so that each period closes cleanly with totals checked against the bank statement " +
	"before reports go out to finance and audit teams who rely on them")

func filler(seed, words int) string {
	var b strings.Builder
	for i := 0; i < words; i++ {
		if i > 0 {
			if i%16 == 0 {
				b.WriteString(".\n")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(fillerWords[(i*7+seed*3)%len(fillerWords)])
	}
	return b.String() + "."
}

// NeedleSession returns generated session number i (from 1) and the facts
// planted in it. Different numbers plant different names.
func NeedleSession(i int) (*compact.Transcript, Needles) {
	s := strconv.Itoa(i)
	start := time.Date(2025, 3, i, 9, 0, 0, 0, time.UTC)
	b := &needleBuilder{t: &compact.Transcript{Format: "generated", SessionID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
		Cwd: "/work/billing", Timestamp: jsonrec.Stamp(start)}, when: start}
	hash := fmt.Sprintf("9f3c%02da1d7e", i)
	ticket := "BILL-48" + s + "1"
	url := "https://runbooks.example.com/billing/needle-" + s
	port := strconv.Itoa(18080 + i)
	n := Needles{
		FirstRequest: "Migrate the billing service to the v2 ledger API (ticket " + ticket + "). Keep the `--dry-run` flag working and do not touch the public handlers.",
	}
	b.user(n.FirstRequest)
	b.tool("I'll start with the ledger code.", "read", map[string]any{"path": "internal/billing/ledger_" + s + ".go"},
		"package billing\n\n"+filler(i, 300), false)
	b.tool("", "edit", map[string]any{"path": "internal/billing/api_" + s + ".go", "oldText": "v1", "newText": "v2"},
		"Could not find the exact text in internal/billing/api_"+s+".go. The old text must match exactly including all whitespace and newlines.", true)
	b.tool("", "edit", map[string]any{"path": "internal/billing/api_" + s + ".go", "oldText": "apiV1", "newText": "apiV2"},
		"Successfully replaced text in internal/billing/api_"+s+".go.", false)
	b.tool("", "write", map[string]any{"path": "internal/billing/v2_" + s + ".go", "content": "package billing\n"},
		"Successfully wrote 16 bytes to internal/billing/v2_"+s+".go", false)
	b.tool("", "bash", map[string]any{"command": "sed -i 's/ledger_v1/ledger_v2/g' config/billing-" + s + ".yaml"}, "(no output)", false)
	b.tool("", "bash", map[string]any{"command": "mv old/handler_" + s + ".go new/handler_" + s + ".go && cp templates/base-" + s + ".tmpl out/page-" + s + ".tmpl"}, "(no output)", false)
	b.tool("", "bash", map[string]any{"command": "rm -f tmp/cache-" + s + ".db; echo migrated > logs/status-" + s + ".txt; date >> logs/history-" + s + ".log"}, "(no output)", false)
	b.tool("", "bash", map[string]any{"command": "cat > scripts/migrate-" + s + ".sh <<'EOF'\n#!/bin/sh\nexec billing migrate --to v2\nEOF\nchmod +x scripts/migrate-" + s + ".sh"}, "(no output)", false)
	buildErr := "internal/billing/api_" + s + ".go:42:7: undefined: LedgerClient" + s
	b.tool("", "bash", map[string]any{"command": "go build ./..."},
		"# example.com/billing/internal/billing\n"+buildErr+"\n\nCommand exited with code 1", true)
	testErr := "--- FAIL: TestLedgerBalance" + s + " (0.02s)"
	b.tool("", "bash", map[string]any{"command": "go test ./internal/billing/ 2>&1 | tee reports/test-" + s + ".txt"},
		"=== RUN   TestLedgerBalance"+s+"\n"+testErr+"\n    ledger_test.go:88: balance 1200 != 1250\nFAIL\nFAIL\texample.com/billing/internal/billing\t0.031s", false)
	b.user("The staging database listens on port " + port + " and the runbook is at " + url + ". Commit " + hash + " broke the balance check.")
	b.say("Understood. The failure comes from `ReconcileLedger" + s + "`, which rounds before summing; ticket " + ticket + " tracks it. I'll fix the rounding in `roundCents` next.")
	n.Files = []string{
		"internal/billing/ledger_" + s + ".go", "internal/billing/api_" + s + ".go", "internal/billing/v2_" + s + ".go",
		"config/billing-" + s + ".yaml", "old/handler_" + s + ".go", "new/handler_" + s + ".go",
		"templates/base-" + s + ".tmpl", "out/page-" + s + ".tmpl", "tmp/cache-" + s + ".db", "logs/status-" + s + ".txt",
		"logs/history-" + s + ".log", "scripts/migrate-" + s + ".sh", "reports/test-" + s + ".txt",
	}
	n.ErrorLines = []string{
		"Could not find the exact text in internal/billing/api_" + s + ".go. The old text must match exactly including all whitespace and newlines.",
		buildErr, testErr,
	}
	n.Identifiers = []string{ticket, "--dry-run", port, url, hash, "ReconcileLedger" + s, "roundCents"}

	// Filler: long reads and short turns, about 50,000 tokens.
	for k := 0; k < 24; k++ {
		if k%4 == 0 {
			b.user("Go on with the next part, please.")
		}
		b.tool("Reading the next part of the documentation.", "read", map[string]any{"path": "docs/guide-" + string(rune('a'+k)) + ".md"},
			filler(i+k, 1600), false)
		b.say("That part changes nothing for the migration; moving on.")
	}
	b.user("Summarize where we are.")
	b.say("The migration is under way; the rounding fix is next.")
	return b.t, n
}
