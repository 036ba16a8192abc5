package handoff

import (
	"reflect"
	"testing"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/retention"
)

func summaryContext(summary string, rest ...string) *compact.Context {
	c := &compact.Context{Messages: []*compact.Message{compact.TextMessage(compact.RoleCompactionSummary, summary)}}
	for _, r := range rest {
		c.Messages = append(c.Messages, compact.TextMessage(compact.RoleUser, r))
	}
	return c
}

func TestScoreItems(t *testing.T) {
	it := Item{Text: "do not run the migrations against prod", Keys: []string{"migrations", "prod"}}
	for _, tt := range []struct {
		name, text string
		want       bool
	}{
		{"the text, case and blanks aside", "## Constraints\n- Do NOT run the   migrations\nagainst prod", true},
		{"the key words on one line", "- someone ran the Migrations against PROD last week", true},
		{"the key words on two lines", "- the migrations\n- prod", false},
		{"absent", "- nothing here", false},
	} {
		if got := ReadContext(summaryContext(tt.text)).Has(it); got != tt.want {
			t.Errorf("%s: Has = %v, want %v", tt.name, got, tt.want)
		}
	}
	text := ReadContext(summaryContext("- Alice -> migration, Bob -> API handlers\n- Chen\n- load test"))
	for _, tt := range []struct {
		role Role
		want bool
	}{
		{Role{Owner: "Alice", TaskKeys: []string{"migration"}}, true},
		{Role{Owner: "Bob", TaskKeys: []string{"api handlers"}}, true},
		{Role{Owner: "Chen", TaskKeys: []string{"load test"}}, false},
	} {
		if got := text.HasRole(tt.role); got != tt.want {
			t.Errorf("HasRole(%+v) = %v, want %v", tt.role, got, tt.want)
		}
	}
}

func TestScoreSuperseded(t *testing.T) {
	old := Item{Text: "use Redis for the cache", Keys: []string{"redis"}}
	for _, tt := range []struct {
		name           string
		ctx            *compact.Context
		handled, shown bool
	}{
		{"absent", summaryContext("## Goal\n- Put a cache in front of the price lookups\n## Key Decisions\n- use Memcached"), true, false},
		{"marked under Key Decisions", summaryContext("## Key Decisions\n- Memcached (replaced Redis)"), true, false},
		{"marked with the user's words", summaryContext("## Critical Context\n- Let's not use Redis after all."), true, false},
		{"unmarked under Goal", summaryContext("## Goal\n- Initially: Let's use Redis for the cache."), false, true},
		{"unmarked under Key Decisions", summaryContext("## Key Decisions\n- I'll set up Redis first."), false, true},
		{"unmarked elsewhere in the summary", summaryContext("## Critical Context\n### User messages\n- Let's use Redis for the cache."), false, false},
		{"unmarked in a kept message", summaryContext("## Goal\n- a cache", "## Goal\nuse Redis"), false, false},
	} {
		h, s := ReadContext(tt.ctx).Superseded(old)
		if h != tt.handled || s != tt.shown {
			t.Errorf("%s: handled %v shown %v, want %v %v", tt.name, h, s, tt.handled, tt.shown)
		}
	}
}

func TestScoreTruth(t *testing.T) {
	truth := &Truth{
		Goal:       Item{Text: "Put a cache in front of the price lookups", Keys: []string{"cache", "price"}},
		Next:       []Item{{Text: "add a regression test for the refund rounding", Keys: []string{"refund rounding"}}},
		Final:      &Item{Text: "use Memcached for the cache", Keys: []string{"memcached"}},
		Superseded: []Item{{Text: "use Redis for the cache", Keys: []string{"redis"}}},
		Roles:      []Role{{Owner: "Alice", Task: "the load test", TaskKeys: []string{"load test"}}},
	}
	c := &Case{Truth: *truth}
	before := summaryContext("", "a long conversation "+string(make([]byte, 4000)))
	after := summaryContext("## Goal\n- Put a cache in front of the price lookups, with Redis\n## Key Decisions\n- Memcached")
	s := ScoreContext(c, before, after)
	want := Score{
		Items:        retention.Recall{Found: 2, Total: 3, Missing: []string{"add a regression test for the refund rounding"}},
		Final:        retention.Recall{Found: 1, Total: 1},
		Superseded:   retention.Recall{Total: 1, Missing: []string{"use Redis for the cache"}},
		Shown:        []string{"use Redis for the cache"},
		Roles:        retention.Recall{Total: 1, Missing: []string{"Alice: the load test"}},
		TokensBefore: s.TokensBefore, TokensAfter: s.TokensAfter,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("score\n%+v\nwant\n%+v", s, want)
	}
	if s.TokensBefore <= s.TokensAfter || s.TokensAfter == 0 || s.Ratio() >= 100 {
		t.Errorf("tokens %d -> %d", s.TokensBefore, s.TokensAfter)
	}
}

// TestReadContextBullets: a summary's list item and its indented
// continuation lines are one line; a kept message's lines are not joined.
func TestReadContextBullets(t *testing.T) {
	r := Role{Owner: "Alice", TaskKeys: []string{"schema migration"}}
	if !ReadContext(summaryContext("## Critical Context\n- Owners: Alice\n  takes the schema migration\n- Bob")).HasRole(r) {
		t.Error("a list item's continuation line is not part of it")
	}
	if ReadContext(summaryContext("## Critical Context\n- Owners: Alice\n- schema migration")).HasRole(r) {
		t.Error("two list items are read as one")
	}
	if ReadContext(summaryContext("", "- Owners: Alice\n  takes the schema migration")).HasRole(r) {
		t.Error("the lines of a kept message are joined")
	}
}
