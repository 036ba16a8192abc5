package extractive

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// TestDecisionHistory feeds conversations in which the user withdraws,
// replaces or rejects an earlier plan, in several phrasings, and checks
// that the summary shows the later plan as the one in force and never
// the earlier one unmarked under Goal or Key Decisions; and that
// corrections, questions and constraints override nothing.
func TestDecisionHistory(t *testing.T) {
	tests := []struct {
		name       string
		users      []string // user turns; each is answered by the assistant line of the same index in replies
		replies    []string
		holding    string   // the decision in force; "" when nothing was overridden
		superseded []string // texts that must appear only with a mark
		rejected   []string // assistant decisions turned down
	}{
		{
			name:       "scratch that",
			users:      []string{"Let's use Redis for the session cache.", "Scratch that - let's use Memcached for the session cache instead."},
			replies:    []string{"I'll use go-redis for the client.", "Switching the client over."},
			holding:    "Memcached for the session cache",
			superseded: []string{"Let's use Redis for the session cache."},
			rejected:   []string{"I'll use go-redis for the client."},
		},
		{
			name:       "actually, go with B",
			users:      []string{"Implement the export as CSV files.", "Run the linter on the exporter package.", "Actually, go with JSON for the export instead of CSV."},
			replies:    []string{"I'll use encoding/csv for the export writer.", "The linter passes.", "On it."},
			holding:    "go with JSON for the export",
			superseded: []string{"Implement the export as CSV files."},
			rejected:   []string{"I'll use encoding/csv for the export writer."},
		},
		{
			name:       "let's not",
			users:      []string{"Add retries to the uploader with exponential backoff.", "Let's not add retries to the uploader after all; fail fast and log the error."},
			replies:    []string{"Adding a retry loop.", "Removing the loop."},
			holding:    "fail fast and log the error",
			superseded: []string{"Add retries to the uploader with exponential backoff."},
		},
		{
			name:     "no, rejecting a proposal",
			users:    []string{"Call the billing service for the invoice totals.", "No, use the v2 endpoint."},
			replies:  []string{"I'll use the v1 endpoint of the billing service for this.", "Switching to v2."},
			rejected: []string{"I'll use the v1 endpoint of the billing service for this."},
		},
		{
			name:       "two overrides",
			users:      []string{"Use Postgres for the event store.", "Instead of Postgres, use SQLite for the event store.", "On second thought, go with DynamoDB for the event store."},
			replies:    []string{"Creating the schema.", "Porting the schema.", "Porting again."},
			holding:    "DynamoDB for the event store",
			superseded: []string{"Use Postgres for the event store.", "Instead of Postgres, use SQLite for the event store."},
		},
		{
			name:    "a question overrides nothing",
			users:   []string{"Add a test for the parser.", "Should we document the parser API instead of commenting it?"},
			replies: []string{"Test added.", "Either works."},
		},
		{
			name:    "a constraint overrides nothing",
			users:   []string{"Upgrade the logging library.", "Let's not touch anything under vendor/ though."},
			replies: []string{"Upgrading.", "Understood."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := history()
			for i, u := range tt.users {
				req.Messages = append(req.Messages, user(u), assistant(tt.replies[i]))
			}
			text := run(t, New(Options{}), req)
			goal := sectionBody(t, text, "## Goal")
			decisions := sectionBody(t, text, "## Key Decisions")
			if tt.holding == "" {
				mustNotContain(t, text, "replacing an earlier plan", "Superseded by", "[superseded")
			} else {
				mustContain(t, decisions, "Decided by the user, replacing an earlier plan: ")
				if !lineWith(decisions, tt.holding, "replacing an earlier plan") {
					t.Errorf("the plan in force %q is not a decision in force:\n%s", tt.holding, decisions)
				}
			}
			for _, s := range tt.superseded {
				for _, sec := range []string{goal, decisions, sectionBody(t, text, "## Constraints & Preferences")} {
					for _, line := range strings.Split(sec, "\n") {
						if strings.Contains(line, s) && !strings.Contains(strings.ToLower(line), "superseded") {
							t.Errorf("superseded %q shown unmarked: %q", s, line)
						}
					}
				}
				if !lineWith(decisions, s, "Superseded by a later message") {
					t.Errorf("superseded %q not listed as such:\n%s", s, decisions)
				}
			}
			for _, s := range tt.rejected {
				if !lineWith(decisions, s, "Rejected by the user") {
					t.Errorf("rejected proposal %q not marked:\n%s", s, decisions)
				}
			}
			if len(tt.superseded) > 0 && strings.Contains(tt.superseded[0], tt.users[0]) {
				mustContain(t, goal, "Initially (superseded by a later message, see Key Decisions): "+tt.users[0])
			}
		})
	}
}

// lineWith reports whether one line of text holds all the parts.
func lineWith(text string, parts ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}

// TestHandoffDetails checks the parts of a hand-over that keyword rules
// used to lose: who owns what, a constraint stated without a rule word
// that points back at a failed attempt, what each edit changed, and Next
// Steps that name what is open rather than what was done.
func TestHandoffDetails(t *testing.T) {
	req := history(
		user("Plan for the release:\nAlice -> migration scripts\nBob -> API changes\nThe worker service owns retries; the gateway only forwards."),
		assistant("Understood."),
		user("Someone ran the migrations against prod last week and it wiped staging. Let's not do that again."),
		assistant("", call("e1", "edit", map[string]string{"path": "cfg.go", "oldText": "retries := 3\nmode := x", "newText": "retries := 5\nmode := x"})),
		result("e1", "edit", "ok", false),
		assistant("Done:\n1. Added the retry setting\n2. Fixed the config test\n\nShould I also update the docs for the retry setting?"),
	)
	text := run(t, New(Options{}), req)
	roles := sectionBody(t, text, "### Who does what")
	mustContain(t, roles, "- Alice -> migration scripts", "- Bob -> API changes", "The worker service owns retries; the gateway only forwards.")
	mustContain(t, sectionBody(t, text, "## Constraints & Preferences"),
		"Someone ran the migrations against prod last week and it wiped staging. Let's not do that again.")
	mustContain(t, sectionBody(t, text, "### Done"), "- Edited `cfg.go`: `retries := 3` replaced by `retries := 5`")
	next := sectionBody(t, text, "## Next Steps")
	mustContain(t, next, "Should I also update the docs for the retry setting?")
	mustNotContain(t, next, "Added the retry setting", "Fixed the config test")
}

// TestNextStepsNotInterruption: Claude Code's interruption notice, seen
// raw through the proxy, is not the request to continue with.
func TestNextStepsNotInterruption(t *testing.T) {
	text := run(t, New(Options{}), history(
		user("Rename the package to store."),
		assistant("Renaming now."),
		user("[Request interrupted by user]"),
	))
	next := sectionBody(t, text, "## Next Steps")
	mustNotContain(t, next, "interrupted")
	mustContain(t, next, "Rename the package to store.")
}

// TestDriftCoherent compacts a growing conversation four times through
// the engine, a turn split each time, and checks that the summary stays
// one document: one Goal with the first request and the latest one, no
// repeated headings or separators, every user message still quoted, and
// the split turns' requests among them.
func TestDriftCoherent(t *testing.T) {
	ctx := context.Background()
	log := compact.NewSliceLog()
	eng := &compact.Engine{Summarizer: New(Options{}), KeepRecentTokens: 300}
	turn := 0
	step := func(n int) {
		for range n {
			turn++
			log.AppendMessage(ctx, user(fmt.Sprintf("Step %d: update module%d.go and keep the tests green. %s", turn, turn, strings.Repeat("Detail. ", 120))))
			log.AppendMessage(ctx, assistant(fmt.Sprintf("Updated module%d.go. %s", turn, strings.Repeat("Explaining. ", 150))))
		}
	}
	step(6)
	for range 4 {
		if _, err := eng.Compact(ctx, log, compact.Request{Reason: compact.ReasonManual}); err != nil {
			t.Fatal(err)
		}
		step(4)
	}
	summary := compact.BuildContext(log.Path()).ModelMessages()[0].Text()
	history, _ := compact.SplitTurnPrefix(summary)
	goal := sectionBody(t, history, "## Goal")
	if strings.Count(goal, "\n- ") != 1 || !strings.HasPrefix(goal, "- Initially: Step 1:") || !strings.Contains(goal, "- Most recently: Step ") {
		t.Errorf("goal:\n%s", goal)
	}
	if n := strings.Count(summary, strings.TrimSpace(compact.TurnPrefixIntro)); n != 1 {
		t.Errorf("%d turn separators", n)
	}
	seen := map[string]bool{}
	for _, h := range headingsOf(history) {
		if seen[h] {
			t.Errorf("heading %q repeated", h)
		}
		seen[h] = true
	}
	if strings.Count(sectionBody(t, history, "### In Progress"), "Last assistant statement") != 1 {
		t.Errorf("In Progress piles up:\n%s", sectionBody(t, history, "### In Progress"))
	}
	users := sectionBody(t, history, "### User messages (newest first)")
	for i := 1; i < turn-4; i++ {
		if !strings.Contains(users, fmt.Sprintf("Step %d: ", i)) && !strings.Contains(summary, fmt.Sprintf("Step %d: ", i)) {
			t.Errorf("step %d lost", i)
		}
	}
}
