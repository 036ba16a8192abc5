package extractive

import (
	"context"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

func TestSplitLedger(t *testing.T) {
	files := compact.FormatFileLists([]string{"a.go"}, nil)
	tests := []struct {
		name, in, rest, ledger string
	}{
		{"none", "## Goal\n- x", "## Goal\n- x", ""},
		{"last", "## Goal\n- x\n\n" + LedgerHeading + "\n\n### Errors\n- Open: y", "## Goal\n- x", LedgerHeading + "\n\n### Errors\n- Open: y"},
		{"before the file lists", "## Goal\n- x\n\n" + LedgerHeading + "\n- u\n\n" + files, "## Goal\n- x\n\n" + files, LedgerHeading + "\n- u"},
		{"before a turn prefix", "## Goal\n- x\n\n" + LedgerHeading + "\n- u\n\n" + compact.TurnPrefixIntro + "## Turn Request\n- t",
			"## Goal\n- x\n\n" + strings.TrimSpace(compact.TurnPrefixIntro) + "\n\n## Turn Request\n- t", LedgerHeading + "\n- u"},
		{"quoted inside a line", "## Goal\n- see " + LedgerHeading, "## Goal\n- see " + LedgerHeading, ""},
	}
	for _, tt := range tests {
		rest, ledger := SplitLedger(tt.in)
		if rest != tt.rest || ledger != tt.ledger {
			t.Errorf("%s: SplitLedger = (%q, %q), want (%q, %q)", tt.name, rest, ledger, tt.rest, tt.ledger)
		}
	}
}

// TestLedger: the record quotes the user verbatim (an overridden message
// marked), gives each error its status, lists the files shell commands
// touched, stays within its budget, keeping the rules when it must drop,
// and is empty when there is nothing to record.
func TestLedger(t *testing.T) {
	s := New(Options{})
	req := history(
		user("Use Redis for the session cache."),
		assistant("", call("c1", "bash", map[string]any{"command": "go test ./cache"})),
		result("c1", "bash", "FAIL\ncache_test.go:12: dial tcp: connection refused\nCommand exited with code 1", true),
		assistant("", call("c2", "bash", map[string]any{"command": "go test ./cache"})),
		result("c2", "bash", "ok", false),
		assistant("", call("c3", "bash", map[string]any{"command": "go vet ./... > vet.txt"})),
		result("c3", "bash", "", false),
		user("Scratch that, use Memcached for the session cache instead."),
		assistant("Switching."),
	)
	ledger, err := s.Ledger(context.Background(), req, 0)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, ledger, LedgerHeading, "- Scratch that, use Memcached for the session cache instead.",
		"- "+supersededMark+"Use Redis for the session cache.", "- Resolved: `go test ./cache` (exit 1)", "`vet.txt`")
	mustOrder(t, ledger, "Scratch that", "Use Redis")

	// A budget too small for everything keeps a rule over chatter.
	var msgs []*compact.Message
	msgs = append(msgs, user("Never push to main directly."))
	for i := 0; i < 40; i++ {
		msgs = append(msgs, user(strings.Repeat("chatter about the weather and lunch plans ", 10)), assistant("ok"))
	}
	small, err := s.Ledger(context.Background(), history(msgs...), 300)
	if err != nil {
		t.Fatal(err)
	}
	if tokens(small) > 300 {
		t.Errorf("ledger of ~%d tokens over its budget of 300", tokens(small))
	}
	mustContain(t, small, "Never push to main directly.")

	if empty, _ := s.Ledger(context.Background(), history(assistant("hello")), 0); empty != "" {
		t.Errorf("nothing to record, got %q", empty)
	}
}
