package extractive

import (
	"regexp"
	"strings"

	"github.com/compactkit/compact/summarize/facts"
)

// Decisions carry their history. A user message that withdraws, replaces
// or rejects what came before it ("scratch that", "let's not …", "go with
// B instead", "no, …") makes the earlier plan superseded: the summary
// shows it as such, never as the goal or a decision in force, and shows
// the later message as the decision that holds.
//
// The rules stay on the safe side, since marking a live request as
// superseded would hide it: in a long working session "no, …", "wait, …"
// and "actually …" mostly correct a detail, and most messages share a
// word or two with many others.
//
//   - A message that opens with a withdrawal ("scratch that", "never
//     mind", "on second thought", "I changed my mind", ...) overrides the
//     newest earlier request it shares two content words with
//     (facts.ContentWords), else the user's previous message.
//   - A message with a change word ("instead", "rather than", "let's
//     not", "go with", "switch to", "no longer", ...) overrides the newest
//     earlier request it shares two content words with, or the user's
//     previous message if it shares one with that; otherwise nothing. A
//     question overrides nothing.
//   - A message that opens with a refusal ("no, …", "not that") turns
//     down the assistant's decisions since the user last spoke.
//
// The assistant's decisions taken between an overridden request and the
// message that overrode it, and mentioning a content word of either, are
// turned down with the request.

// withdrawals open a user message that withdraws what came before it;
// matched on the message's start, lower-cased, with typographic
// apostrophes made plain.
var withdrawals = []string{
	"scratch that", "forget that", "forget it", "forget what i said", "never mind", "nevermind",
	"on second thought", "on reflection", "i changed my mind", "i've changed my mind", "changed my mind",
	"change of plan", "cancel that", "ignore that", "ignore what i said", "undo that", "revert that",
}

// refusals open a user message that turns down what the assistant just
// proposed or did.
var refusals = []string{"no,", "no.", "no!", "no -", "no —", "nope", "not that", "don't do that", "do not do that"}

// changeWords mark a change of plan anywhere in a user message.
var changeWords = newPhrases("instead", "rather than", "scratch that", "changed my mind", "change of plan",
	"on second thought", "let's not", "lets not", "let us not", "go with", "switch to", "switch over to",
	"no longer", "not anymore", "after all", "forget about")

// overrides is what the span's decisions became.
type overrides struct {
	// by maps a superseded user message (index into found.users) to the
	// one that overrode it.
	by map[int]int
	// rejected holds the assistant decisions (index into
	// found.decisions) a later user message turned down.
	rejected map[int]bool
	// holding are the user messages that overrode an earlier one and
	// were not overridden themselves, oldest first.
	holding []int
}

// superseded reports whether user message u was overridden later.
func (h *overrides) superseded(u int) bool {
	_, ok := h.by[u]
	return ok
}

// decisionHistory reads the overrides of the span's user messages.
func decisionHistory(f *found) *overrides {
	h := &overrides{by: map[int]int{}, rejected: map[int]bool{}}
	overrode := map[int]bool{}
	for u := 1; u < len(f.users); u++ {
		text := strings.TrimSpace(f.users[u].text)
		withdrawal := opensWith(text, withdrawals)
		if opensWith(text, refusals) {
			h.rejectSince(f, u-1, u, nil)
		}
		if !withdrawal && (strings.HasSuffix(text, "?") || !changeWords.match(text)) {
			continue
		}
		words := facts.ContentWords(text, -1)
		target := -1
		for p := u - 1; p >= 0; p-- {
			t := strings.TrimSpace(f.users[p].text)
			if h.superseded(p) || strings.HasSuffix(t, "?") {
				continue
			}
			if n := sharedWords(t, words); n >= 2 || (p == u-1 && n >= 1) {
				target = p
				break
			}
		}
		if target < 0 && withdrawal && !strings.HasSuffix(strings.TrimSpace(f.users[u-1].text), "?") {
			target = u - 1
		}
		if target < 0 {
			continue
		}
		h.by[target] = u
		overrode[u] = true
		h.rejectSince(f, target, u, append(words, facts.ContentWords(f.users[target].text, -1)...))
	}
	for u := range f.users {
		if overrode[u] && !h.superseded(u) {
			h.holding = append(h.holding, u)
		}
	}
	return h
}

// rejectSince turns down the assistant decisions between user messages
// from and to; with words, only those that mention one of them (as part
// of a word too: "go-redis" mentions "redis").
func (h *overrides) rejectSince(f *found, from, to int, words []string) {
	for d := range f.decisions {
		if i := f.decisionIdx[d]; i > f.users[from].idx && i < f.users[to].idx && (words == nil || mentions(f.decisions[d], words)) {
			h.rejected[d] = true
		}
	}
}

// opensWith reports whether text starts with one of the openings,
// lower-cased, with typographic apostrophes made plain.
func opensWith(text string, openings []string) bool {
	head := strings.ToLower(normalizeQuotes(strings.TrimLeft(text, " \t\n*_>")))
	for _, p := range openings {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	return false
}

// sharedWords counts the content words of text among words.
func sharedWords(text string, words []string) int {
	n := 0
	for _, h := range facts.ContentWords(text, -1) {
		for _, w := range words {
			if h == w {
				n++
				break
			}
		}
	}
	return n
}

// supersededMark opens the quote of a user message a later one overrode.
const supersededMark = "[superseded by a later message] "

// inForce returns the user messages no later message overrode.
func (h *overrides) inForce(users []userMsg) []userMsg {
	if len(h.by) == 0 {
		return users
	}
	out := make([]userMsg, 0, len(users))
	for u, m := range users {
		if !h.superseded(u) {
			out = append(out, m)
		}
	}
	return out
}

// current returns the user message that holds for the first one: the
// message that replaced it, or the one that replaced that, and so on; 0
// when nothing replaced it.
func (h *overrides) current() int {
	u, seen := 0, map[int]bool{}
	for !seen[u] {
		seen[u] = true
		next, ok := h.by[u]
		if !ok {
			return u
		}
		u = next
	}
	return u
}

// marked returns the user messages with those a later one overrode
// marked as such, for quoting.
func (h *overrides) marked(users []userMsg) []userMsg {
	if len(h.by) == 0 {
		return users
	}
	out := append([]userMsg(nil), users...)
	for u := range h.by {
		out[u].text = supersededMark + out[u].text
	}
	return out
}

// decisionLines writes the Key Decisions: the user's decisions in force
// that replaced an earlier plan, what they superseded, then the
// assistant's decisions, those the user turned down marked as rejected.
// Each is one line, so that its mark stays beside it.
func (h *overrides) decisionLines(f *found, o Options, lead string) []string {
	var out []string
	for _, u := range h.holding {
		out = append(out, "- Decided by the user, replacing an earlier plan: "+oneLineText(shorten(userText(f.users[u]), o.ShortenedChars)))
	}
	for u := range f.users {
		if h.superseded(u) {
			out = append(out, "- Superseded by a later message: "+oneLineText(shorten(userText(f.users[u]), o.ShortenedChars)))
		}
	}
	var current, rejected []string
	for d, s := range f.decisions {
		if h.rejected[d] {
			rejected = append(rejected, s)
		} else {
			current = append(current, s)
		}
	}
	for _, s := range newestUnique(current, o.MaxItems) {
		out = append(out, lead+s)
	}
	for _, s := range newestUnique(rejected, o.MaxItems) {
		out = append(out, "- Rejected by the user: "+s)
	}
	return out
}

// isDecision reports whether a sentence with a decision word states a
// choice rather than being a fragment of one: a sentence of four words
// or more that does not end in a colon ("Instead of:") and does not open
// with thinking aloud ("Wait, …", "Let me …", "Hmm").
func isDecision(s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, ":") || len(strings.Fields(t)) < 4 {
		return false
	}
	head := strings.ToLower(normalizeQuotes(t))
	for _, p := range []string{"wait", "let me", "hmm", "ok", "okay", "now let me", "i need to"} {
		if strings.HasPrefix(head, p) && !wordByte(head, len(p)) {
			return false
		}
	}
	return true
}

// roleArrow finds a line that assigns a task: "Alice -> migration",
// "worker → retries", "API => Bob".
var roleArrow = regexp.MustCompile(`^\S.{0,60}?\s*(?:->|→|=>)\s*\S`)

// ownerWords find a user sentence that says who owns or does what.
var ownerWords = newPhrases("owns", "is responsible for", "are responsible for", "in charge of", "is handling",
	"will handle", "takes care of", "assigned to", "belongs to", "is owned by", "owner of", "only forwards",
	"is doing", "will do", "works on", "is working on")

// roleLines returns the user's lines that say who does or owns what, word
// for word, the newest max distinct ones, oldest first: who owns what is
// lost when only the names survive.
func roleLines(users []userMsg, max int) []string {
	var all []string
	for _, u := range users {
		for l := range proseLines(u.text) {
			if roleArrow.MatchString(l) {
				all = append(all, cutRunes(l, 300))
				continue
			}
			for s := range sentences(l) {
				if ownerWords.match(s) {
					all = append(all, cutRunes(s, 300))
				}
			}
		}
	}
	return newestUnique(all, max)
}

// statesRule reports whether a user message states a constraint or a
// preference, or withdraws, replaces or turns down a plan: the messages a
// hand-over can least afford to lose.
func statesRule(text string) bool {
	return constraintWords.match(text) || changeWords.match(text) || opensWith(text, withdrawals) || opensWith(text, refusals)
}
