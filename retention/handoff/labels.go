package handoff

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/compactkit/compact"
)

// Label is what a correct handoff of a real session must say at one cut,
// written by a person who read the session: the current goal, the next
// step, the decisions in force and the files that must survive.
type Label struct {
	// Session names the file: "shared:" and a path in the shared test
	// data folder, or "repo:" and a path from the module root.
	Session string `json:"session"`
	// Agent is the agent that wrote it ("pi", "claude-code", ...).
	Agent string `json:"agent"`
	// KeepRecent is the cut: the kept-part budget the session is
	// compacted at. Cut says in words what falls on each side.
	KeepRecent int    `json:"keepRecent"`
	Cut        string `json:"cut,omitempty"`

	Goal      Item   `json:"goal"`
	Next      []Item `json:"next"`
	Decisions []Item `json:"decisions"`
	Files     []Item `json:"files"`
}

// Labels is a labels file.
type Labels struct {
	About    string  `json:"about,omitempty"`
	Sessions []Label `json:"sessions"`
}

// ReadLabels reads a labels file. Every session must name its file, a
// positive cut and a goal, and every item a key word.
func ReadLabels(path string) (*Labels, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseLabels(path, data)
}

//go:embed testdata/labels.json
var shippedLabels []byte

// ShippedLabels returns the labels this package ships
// (testdata/labels.json): the real sessions of the shared test data
// folder and of this repository, read and labelled by hand.
func ShippedLabels() *Labels {
	ls, err := parseLabels("labels.json", shippedLabels)
	if err != nil {
		panic("handoff: the shipped labels do not parse: " + err.Error()) // TestShippedLabels
	}
	return ls
}

// parseLabels parses and checks a labels file's contents; name says
// where they came from in errors.
func parseLabels(name string, data []byte) (*Labels, error) {
	var ls Labels
	if err := json.Unmarshal(data, &ls); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i, l := range ls.Sessions {
		if l.Session == "" || l.KeepRecent <= 0 || l.Goal.Text == "" {
			return nil, fmt.Errorf("%s: session %d: needs a session, a positive keepRecent and a goal", name, i+1)
		}
		for _, c := range l.Checks() {
			if len(c.Item.Keys) == 0 {
				return nil, fmt.Errorf("%s: %s: %s %q has no key words", name, l.Session, c.Kind, c.Item.Text)
			}
		}
	}
	return &ls, nil
}

// LabelCheck is one label item and whether a context holds it.
type LabelCheck struct {
	Kind string `json:"kind"` // goal, next, decision, file
	Item Item   `json:"item"`
	Pass bool   `json:"pass"`
}

// Checks returns the label's items, goal first, not yet checked.
func (l *Label) Checks() []LabelCheck {
	out := []LabelCheck{{Kind: "goal", Item: l.Goal}}
	for _, it := range l.Next {
		out = append(out, LabelCheck{Kind: "next", Item: it})
	}
	for _, it := range l.Decisions {
		out = append(out, LabelCheck{Kind: "decision", Item: it})
	}
	for _, it := range l.Files {
		out = append(out, LabelCheck{Kind: "file", Item: it})
	}
	return out
}

// Check checks every item of the label against the context after a
// compaction, by the rule ScoreContext uses for items (its text, or all
// its key words on one line), with where the line may stand narrowed for
// two kinds, so that a goal or a next step mentioned in passing does not
// count:
//
//   - the goal must be under a summary's Goal or Turn Request heading, or in a user
//     message kept verbatim;
//   - the next step must be under a summary's Next Steps or In Progress
//     heading, or in any message kept verbatim.
//
// Decisions and files may stand anywhere.
func (l *Label) Check(ctx *compact.Context) []LabelCheck {
	text := ReadContext(ctx)
	out := l.Checks()
	for i := range out {
		c := &out[i]
		switch c.Kind {
		case "goal":
			c.Pass = text.hasWhere(c.Item, func(l line) bool { return summaryLine(l, "goal", "turn request") || l.role == compact.RoleUser })
		case "next":
			c.Pass = text.hasWhere(c.Item, func(l line) bool {
				return summaryLine(l, "next", "in progress") || !l.inSummary()
			})
		default:
			c.Pass = text.Has(c.Item)
		}
	}
	return out
}

// CheckPath compacts a copy of a conversation's root-to-leaf path, in
// memory, at the label's cut with sum (maxTokens and targetTokens as in
// compact.Request, 0 for none), and checks the context after against the
// label. The entries given are not changed. When the engine records no
// compaction (ErrNothingToCompact, ErrNothingToGain) the checks are of the
// context as it stands, returned with that error; any other error fails.
func (l *Label) CheckPath(ctx context.Context, path []*compact.Entry, sum compact.Summarizer, maxTokens, targetTokens int) ([]LabelCheck, error) {
	log := compact.NewSliceLog(path...)
	eng := &compact.Engine{Summarizer: sum, KeepRecentTokens: l.KeepRecent}
	_, err := eng.Compact(ctx, log, compact.Request{Reason: compact.ReasonManual, MaxTokens: maxTokens,
		TargetTokens: targetTokens, Fallback: compact.FallbackOff})
	if err != nil && !errors.Is(err, compact.ErrNothingToCompact) {
		return nil, err
	}
	return l.Check(compact.BuildContext(log.Path())), err
}
