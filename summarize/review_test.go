package summarize

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/compactkit/compact"
)

// goodNotes is a hand-over as a model following the prompt writes it for
// the session opened by reviewRequest.
const goodNotes = `## Goal
- Migrate the storage layer from SQLite to Postgres, keeping the test suite green.

## Constraints & Preferences
- Do not touch ` + "`migrations/0001_init.sql`" + `.

## Progress
### Done
- Rewrote ` + "`store/sql.go`" + ` to use pgx; 41 of 43 tests pass.
### In Progress
- Fixing the two failing tests in ` + "`store/sql_test.go`" + `.
### Blocked
- None.

## Key Decisions
- pgx over database/sql: the user wants COPY support.

## Next Steps
1. Fix TestListOrder (ORDER BY missing).
2. Run the whole suite.

## Critical Context
- DSN in ` + "`POSTGRES_URL`" + `.`

// reviewRequest is a history starting the session, long enough that a
// reply of a dozen words is far too short for it.
func reviewRequest() *compact.SummaryRequest {
	msgs := []*compact.Message{user("Please migrate the storage layer from SQLite to Postgres and keep the test suite green.")}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, assistant("Reading store/sql.go and the tests around it, then changing the queries one by one."))
	}
	return &compact.SummaryRequest{Kind: compact.SummaryHistory, Messages: msgs}
}

// TestReview runs real-looking bad answers (refusals, apologies,
// degenerate and off-task replies) and good ones through the review.
func TestReview(t *testing.T) {
	span := 600 // words of transcript the reply replaces
	tests := []struct {
		name   string
		kind   compact.SummaryKind
		reply  string
		refuse []string // phrases the problems must contain; nil: accepted
	}{
		{"refusal", 0, "I'm sorry, but I can't help with that request.", []string{"refusal", "too short", "Goal"}},
		{"refusal, typographic apostrophe", 0, "I\u2019m sorry, but I cannot assist with that.", []string{"refusal"}},
		{"apology with reason", 0, "I apologize, but I'm unable to summarize this conversation because it contains material I am not able to process. If you share a shorter excerpt I can try again.", []string{"refusal"}},
		{"as an AI", 0, "As an AI language model, I do not have access to the previous messages of this session, so I cannot write notes about them.", []string{"refusal"}},
		{"refusal in bold", 0, "**Sorry, I can't do that.**", []string{"refusal"}},
		{"declines mid-sentence", 0, "Thanks for the transcript. Unfortunately this is something I cannot help with at the moment.", []string{"refusal"}},
		{"one word", 0, "Summary", []string{"too short"}},
		{"five words", 0, "The user fixed the bug.", []string{"too short for what it replaces (5 words"}},
		{"continues the conversation", 0, "Sure! Here is the updated function:\n\n```go\nfunc open() (*pgx.Conn, error) { return pgx.Connect(ctx, dsn) }\n```\n\nLet me know if you want me to run the tests now, or whether the migration of the remaining queries should wait for review first.", []string{"Goal", "Next Steps"}},
		{"prose without headings", 0, "The user asked to move the storage layer from SQLite to Postgres while keeping the tests green. The agent rewrote store/sql.go with pgx and most tests pass; two remain failing in store/sql_test.go and the next thing is to fix ordering in TestListOrder and rerun the suite.", []string{"Goal", "Next Steps"}},
		{"off task", 0, strings.Replace(strings.Replace(strings.Replace(strings.Replace(goodNotes,
			"Migrate the storage layer from SQLite to Postgres, keeping the test suite green.", "Improve the speed of the HTTP handlers.", 1),
			"store/", "api/", -1), "Postgres", "fasthttp", -1), "tests", "benchmarks", -1), []string{"loses the user's request"}},
		{"good notes", 0, goodNotes, nil},
		{"good notes, bold headings", 0, "**Goal:**\n- Migrate storage from SQLite to Postgres; test suite stays green.\n\n**Progress:**\n- store/sql.go rewritten on pgx, two tests failing.\n\n**Next steps:**\n1. Fix TestListOrder, then rerun the whole suite before touching anything else.", nil},
		{"good notes quoting a refusal", 0, "## Goal\n- Migrate the storage layer to Postgres with the test suite green.\n\n## Blocked\n- The proxy answered \"I'm sorry, I cannot provide a token\" for the CI database.\n\n## Next Steps\n1. Ask the user for a database token for CI.", nil},
		{"good notes, renamed headings", 0, strings.Replace(strings.Replace(goodNotes, "## Goal", "## Goal of the session", 1), "## Next Steps", "## Next steps", 1), nil},
		{"turn prefix", compact.SummaryTurnPrefix, "## Turn Request\n- Migrate the storage layer from SQLite to Postgres, tests green.\n\n## Work So Far in This Turn\n- store/sql.go rewritten with pgx.\n\n## Context for the Kept Messages\n- Two tests fail in store/sql_test.go.", nil},
		{"turn prefix with history headings", compact.SummaryTurnPrefix, goodNotes, []string{"Turn Request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := reviewRequest()
			req.Kind = tt.kind
			problems := Review(req, tt.reply, span)
			if tt.refuse == nil {
				if problems != nil {
					t.Fatalf("refused a good reply: %q", problems)
				}
				return
			}
			if problems == nil {
				t.Fatal("accepted")
			}
			all := strings.Join(problems, "; ")
			for _, want := range tt.refuse {
				if !strings.Contains(all, want) {
					t.Errorf("problems %q lack %q", all, want)
				}
			}
			if strings.Contains(all, "SQLite") || strings.Contains(all, "migrate") {
				t.Errorf("problems quote the conversation: %q", all)
			}
		})
	}
}

// TestReviewRequestSources checks where the request the reply must keep
// comes from: the first request of an earlier compaction, not a history
// that only continues an earlier summary, the turn's own request.
func TestReviewRequestSources(t *testing.T) {
	notes := "## Goal\n- Tidy the README.\n\n## Next Steps\n1. Push the branch once the README reads well."
	first := user("Migrate the storage layer from SQLite to Postgres")
	tests := []struct {
		name string
		req  *compact.SummaryRequest
		lost bool
	}{
		{"first request given", &compact.SummaryRequest{FirstRequest: first, PreviousSummary: "old", Messages: []*compact.Message{user("Tidy the README")}}, true},
		{"continues a summary", &compact.SummaryRequest{PreviousSummary: "old", Messages: []*compact.Message{user("Migrate the storage layer from SQLite to Postgres")}}, false},
		{"starts the session", &compact.SummaryRequest{Messages: []*compact.Message{user("Tidy the README"), assistant("ok")}}, false},
		{"starts the session elsewhere", &compact.SummaryRequest{Messages: []*compact.Message{first}}, true},
		// Claude Code writes reminders into the user's turn; the words to
		// keep are the user's, not the reminder's.
		{"reminders are not the request", &compact.SummaryRequest{FirstRequest: user("<system-reminder>\nThe todo list is empty. Use the TodoWrite tool when starting work that spans several steps.\n</system-reminder>\n\nTidy the README")}, false},
		{"interruption notice skipped", &compact.SummaryRequest{Messages: []*compact.Message{user("[Request interrupted by user]"), user("Tidy the README")}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lost := slices.Contains(Review(tt.req, notes, 0), "it loses the user's request")
			if lost != tt.lost {
				t.Errorf("lost = %v, want %v", lost, tt.lost)
			}
		})
	}
}

// TestRequiredHeadingsAsked keeps the review and the prompts in step:
// every heading the review requires is one the prompt asks for.
func TestRequiredHeadingsAsked(t *testing.T) {
	for _, kind := range []compact.SummaryKind{compact.SummaryHistory, compact.SummaryTurnPrefix} {
		asked := askedHeadings(kind)
		for _, h := range requiredHeadings(kind) {
			if !slices.Contains(asked, h) {
				t.Errorf("kind %v: required heading %q is not asked for (asked: %q)", kind, h, asked)
			}
		}
	}
}

// TestSummarizeAsksAgain: a refused reply is asked for once more, with
// the problems named; a good second reply is used and the refusal
// reported; a second bad one fails with ErrSummaryRejected.
func TestSummarizeAsksAgain(t *testing.T) {
	const refusal = "I'm sorry, but I can't help with that request."
	tests := []struct {
		name    string
		replies []string
		wantErr bool
	}{
		{"good at once", []string{goodNotes}, false},
		{"refusal, then good", []string{refusal, goodNotes}, false},
		{"refusal twice", []string{refusal, refusal}, true},
		{"refusal, then too short", []string{refusal, "Migrated storage to Postgres."}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fake{respond: func(n int, req *Request) (*Response, error) {
				return &Response{Text: tt.replies[n-1], Usage: compact.Usage{Input: 100, Output: 10}}, nil
			}}
			s, _ := newTest(t, f, model200k, nil)
			sum, err := s.Summarize(context.Background(), reviewRequest())
			reqs := f.requests()
			if len(reqs) != len(tt.replies) {
				t.Fatalf("%d requests, want %d", len(reqs), len(tt.replies))
			}
			if len(reqs) == 2 {
				if !strings.HasPrefix(reqs[1].Prompt, reqs[0].Prompt) ||
					!strings.Contains(reqs[1].Prompt, "could not be used as the hand-over notes: it is a refusal or an apology") {
					t.Errorf("the second request does not repeat the first and say what was wrong:\n%s", reqs[1].Prompt[len(reqs[0].Prompt):])
				}
			}
			if tt.wantErr {
				var rerr *compact.SummaryRejectedError
				if !errors.Is(err, compact.ErrSummaryRejected) || !errors.As(err, &rerr) || rerr.Summarizer != "big-200k" {
					t.Fatalf("err = %v, want a *SummaryRejectedError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Text != goodNotes || sum.Usage.Input != 100*len(reqs) {
				t.Errorf("summary %q, usage %+v", sum.Text, sum.Usage)
			}
			if refused := len(sum.Refused) > 0; refused != (len(reqs) == 2) {
				t.Errorf("Refused = %q after %d requests", sum.Refused, len(reqs))
			}
		})
	}
}

// TestRunningSummaryUsersWords: the session's first request is quoted to
// the model in the user's words, without the reminders Claude Code writes
// into the user's turn.
func TestRunningSummaryUsersWords(t *testing.T) {
	req := &compact.SummaryRequest{
		PreviousSummary: "## Goal\n- earlier",
		FirstRequest:    user("<system-reminder>\nThe todo list is empty.\n</system-reminder>\n\nTidy the README"),
	}
	got := runningSummary(req)
	if !strings.HasPrefix(got, firstRequestLabel+"Tidy the README") || strings.Contains(got, "system-reminder") {
		t.Errorf("running summary %q", got)
	}
}
