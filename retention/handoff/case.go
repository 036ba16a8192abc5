package handoff

import (
	"fmt"
	"strings"

	"github.com/compactkit/compact"
)

// Family is a kind of adversarial conversation.
type Family string

// The four families Generate writes.
const (
	// BuriedConstraint states a constraint once, early, in one of several
	// phrasings (some without a rule word: a past accident the user does
	// not want repeated), then buries it under long noise.
	BuriedConstraint Family = "constraint"
	// DecisionOverride makes a decision early and withdraws or replaces
	// it once or twice later ("scratch that", "actually, go with B").
	DecisionOverride Family = "override"
	// Roles hands tasks to several people or components, with names and
	// tasks easy to confuse and, in some cases, a task handed over.
	Roles Family = "roles"
	// References refers back to earlier items: "the second option",
	// "that file", "do what you did for the parser to the lexer".
	References Family = "references"
)

// Families are the families in the order the suite runs and prints them.
var Families = []Family{BuriedConstraint, DecisionOverride, Roles, References}

// ParseFamily returns the family named s, or an error naming s.
func ParseFamily(s string) (Family, error) {
	for _, f := range Families {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown family %q (want one of constraint, override, roles, references)", s)
}

// Item is one piece of ground truth a correct handoff must carry.
type Item struct {
	// Kind says what the item is: "goal", "next", "forbidden", "fact",
	// "decision", "referent", "superseded".
	Kind string `json:"kind"`
	// Text is the item said plainly; present when the context holds it
	// (case and blanks aside).
	Text string `json:"text"`
	// Keys are the item's key words: present too when one line of the
	// context holds all of them (case aside).
	Keys []string `json:"keys"`
}

// Role is one owner and what they own.
type Role struct {
	Owner string `json:"owner"`
	Task  string `json:"task"`
	// TaskKeys are the key words of the task that must stand on the
	// owner's line.
	TaskKeys []string `json:"taskKeys"`
}

// Truth is what a correct handoff of a case must say.
type Truth struct {
	// Goal is the current goal.
	Goal Item `json:"goal"`
	// Next are the open items: what is still to do.
	Next []Item `json:"next"`
	// Forbidden are the actions the user ruled out.
	Forbidden []Item `json:"forbidden"`
	// Facts are paths, identifiers and numbers that must survive.
	Facts []Item `json:"facts"`
	// Final is the decision in force (DecisionOverride), nil otherwise.
	Final *Item `json:"final,omitempty"`
	// Superseded are the decisions (or owners) withdrawn: each must be
	// absent or marked superseded.
	Superseded []Item `json:"superseded,omitempty"`
	// Roles are who owns what (Roles).
	Roles []Role `json:"roles,omitempty"`
	// Referents are the concrete names a later reference resolves to
	// (References).
	Referents []Item `json:"referents,omitempty"`
}

// Items returns every item whose presence counts (all but the roles and
// the superseded decisions), in a fixed order.
func (t *Truth) Items() []Item {
	var out []Item
	out = append(out, t.Goal)
	out = append(out, t.Next...)
	out = append(out, t.Forbidden...)
	out = append(out, t.Facts...)
	if t.Final != nil {
		out = append(out, *t.Final)
	}
	out = append(out, t.Referents...)
	return out
}

// Case is one generated conversation and its ground truth.
type Case struct {
	Family Family `json:"family"`
	Seed   int64  `json:"seed"`
	// Size is the length asked for, in estimated tokens; Tokens the
	// length written.
	Size   int `json:"size"`
	Tokens int `json:"tokens"`
	// KeepRecent is the kept-part budget to compact at: small enough that
	// every turn stating the truth falls in the summarized part.
	KeepRecent int `json:"keepRecent"`
	// Transcript is the conversation.
	Transcript *compact.Transcript `json:"-"`
	// LastCritical is the id of the last entry that states part of the
	// truth; every later entry is noise.
	LastCritical string `json:"lastCritical"`
	// Continuations are the turns appended before each compaction after
	// the first (drift cycles): more work of the same kind, without new
	// truth.
	Continuations [][]*compact.Message `json:"-"`
	Truth         Truth                `json:"truth"`
}

// Name names the case in tables and errors: family/size/seed.
func (c *Case) Name() string {
	return fmt.Sprintf("%s/%d/%d", c.Family, c.Size, c.Seed)
}

// String implements fmt.Stringer.
func (c *Case) String() string { return c.Name() }

// fold lowercases s and folds every run of blanks to one space.
func fold(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}
