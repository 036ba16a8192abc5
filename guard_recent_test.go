package compact

import (
	"context"
	"strings"
	"testing"
)

// TestCompactedRecently pins the rule the Guard and the proxy share.
func TestCompactedRecently(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		tokens, after, threshold, fixed int
		want                            bool
	}{
		{"grew less than a quarter of the room", 1050, 900, 1000, 0, true},
		{"grew a quarter of the room", 1150, 900, 1000, 0, false},
		{"the fixed part is no room", 1050, 900, 1000, 600, false},
		{"the fixed part is no room, little growth", 1050, 990, 1000, 600, true},
		{"size after unknown", 1050, 0, 1000, 0, false},
		{"threshold unknown", 1050, 900, 0, 0, false},
	} {
		if got := CompactedRecently(tc.tokens, tc.after, tc.threshold, tc.fixed); got != tc.want {
			t.Errorf("%s: CompactedRecently(%d, %d, %d, %d) = %v, want %v", tc.name, tc.tokens, tc.after, tc.threshold, tc.fixed, got, tc.want)
		}
	}
}

// TestGuardWaitsAfterASummary: a context summarized to 900 tokens that
// grew to just past its 1,000-token trigger is sent as it is, as the
// proxy sends it ("pass (compacted recently)"); once it has grown by a
// quarter of the trigger the Guard compacts again. Before, the Guard
// compacted again at once.
func TestGuardWaitsAfterASummary(t *testing.T) {
	// DefaultPolicy on a 1,250-token window: a reserve of 250, a trigger
	// of 1,000.
	model := ModelInfo{ID: "tiny", ContextWindow: 1250}
	for _, tc := range []struct {
		reported int
		compacts bool
	}{
		{1050, false}, // 150 tokens since the summary, under 250
		{1150, true},  // 250 tokens since
	} {
		ctx := context.Background()
		log := &SliceLog{}
		if _, err := log.AppendMessage(ctx, TextMessage(RoleUser, strings.Repeat("old ", 400))); err != nil {
			t.Fatal(err)
		}
		kept, _ := log.AppendMessage(ctx, TextMessage(RoleUser, "go on"))
		if err := log.Append(ctx, &Entry{Kind: KindCompaction, Compaction: &Compaction{Summary: "## Goal\nwork", FirstKeptID: kept.ID, TokensBefore: 2000, TokensAfter: 900}}); err != nil {
			t.Fatal(err)
		}
		reply := TextMessage(RoleAssistant, "done")
		reply.StopReason, reply.Usage = StopToolUse, &Usage{Total: tc.reported}
		if _, err := log.AppendMessage(ctx, reply); err != nil {
			t.Fatal(err)
		}
		asked := false
		g := &Guard{Engine: &Engine{}, Log: log, Model: model,
			BeforeCompaction: func(context.Context, Reason, ContextUsage) (HookDecision, error) {
				asked = true
				return HookDecision{Skip: true}, nil
			}}
		if _, err := g.Call(ctx, func(context.Context, []*Message) (*Message, error) {
			return TextMessage(RoleAssistant, "ok"), nil
		}); err != nil {
			t.Fatal(err)
		}
		if asked != tc.compacts {
			t.Errorf("reported %d tokens, 900 after the summary: compacts %v, want %v", tc.reported, asked, tc.compacts)
		}
	}
}
