package extractive

import (
	"regexp"
	"slices"
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
//     (facts.ContentWords), else the newest earlier short statement of
//     the user that is not a question ("Memcached, go with that.").
//   - A message with a change word ("instead", "rather than", "let's
//     not", "go with", "switch to", "no longer", ...) overrides the newest
//     earlier request it shares two content words with, or the user's
//     previous statement (questions skipped) if it shares one with that;
//     otherwise nothing. A question overrides nothing.
//   - A message that opens with a refusal ("no, …", "not that") turns
//     down the assistant's decisions since the user last spoke, and
//     overrides a choice the user stated ("SQS, go with that." … "No,
//     NATS. We don't want to run SQS."): the nearest one it shares a
//     word with, or two.
//   - A message that opens with "actually", "wait" or a refusal and
//     states a choice overrides the choice the user stated just before
//     ("Let's use Redis." … "Actually, go with an in-process LRU.").
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

// softOpenings open a user message that may correct what came before
// ("Actually, …", "Wait, …"): it overrides what it shares a word with, or
// a choice stated just before it when it states one too.
var softOpenings = []string{"actually", "wait", "hmm", "on second thought"}

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
	// partly maps a user message that assigned work to the later one
	// that handed part of it to someone else ("Chen is out, so Goran
	// picks up the runbook").
	partly map[int]int
}

// handoverWords mark a user message that moves work to someone else.
var handoverWords = newPhrases("picks up", "pick up", "takes over", "take over", "is taking over", "hands over",
	"handing over", "reassign", "reassigned", "now owns", "is out", "instead of")

// superseded reports whether user message u was overridden later.
func (h *overrides) superseded(u int) bool {
	_, ok := h.by[u]
	return ok
}

// decisionHistory reads the overrides of the span's user messages.
func decisionHistory(f *found) *overrides {
	h := &overrides{by: map[int]int{}, rejected: map[int]bool{}, partly: map[int]int{}}
	// The content words of each user message, found once: the searches
	// below go back over the earlier messages for every candidate.
	cw := make([]map[string]bool, len(f.users))
	shared := func(p int, words []string) int {
		if cw[p] == nil {
			cw[p] = map[string]bool{}
			for _, w := range facts.ContentWords(f.users[p].text, -1) {
				cw[p][w] = true
			}
		}
		n := 0
		for _, w := range words {
			if cw[p][w] {
				n++
			}
		}
		return n
	}
	overrode := map[int]bool{}
	for u := 1; u < len(f.users); u++ {
		text := strings.TrimSpace(f.users[u].text)
		withdrawal := opensWith(text, withdrawals)
		refusal := opensWith(text, refusals)
		soft := opensWith(text, softOpenings)
		if refusal {
			h.rejectSince(f, u-1, u, nil)
		}
		change := changeWords.match(text)
		if !withdrawal && (strings.HasSuffix(text, "?") || !(refusal || soft || change)) {
			continue
		}
		// A correction ("actually …", "no, …") overrides only a choice:
		// it mostly corrects a fact or a diagnosis.
		onlyChoices := !withdrawal && !change
		words := facts.ContentWords(text, -1)
		target, nearest := -1, -1
		for p := u - 1; p >= 0; p-- {
			t := strings.TrimSpace(f.users[p].text)
			if h.superseded(p) || strings.HasSuffix(t, "?") || (onlyChoices && !userChoiceWords.match(t)) {
				continue
			}
			if nearest < 0 {
				nearest = p
			}
			if n := shared(p, words); n >= 2 || (p == nearest && n >= 1) {
				target = p
				break
			}
		}
		switch {
		case target >= 0:
		case withdrawal:
			// Nothing shares its words: the newest earlier choice the
			// user stated, past questions and pasted output.
			for p := u - 1; p >= 0; p-- {
				if !h.superseded(p) && statesChoice(f.users[p].text) {
					target = p
					break
				}
			}
		case (soft || refusal) && nearest >= 0 && userChoiceWords.match(text) && userChoiceWords.match(f.users[nearest].text) &&
			nearest == previousStatement(f, h, u):
			// "Let's use Redis." … "Actually, go with an LRU.": one
			// choice right after another.
			target = nearest
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
	// Handovers: an earlier assignment of the work a later message moves.
	for u := 1; u < len(f.users); u++ {
		if !handoverWords.match(f.users[u].text) {
			continue
		}
		words := facts.ContentWords(f.users[u].text, -1)
		for p := u - 1; p >= 0; p-- {
			if _, done := h.partly[p]; !done && !h.superseded(p) && shared(p, words) >= 2 && len(roleLines(f.users[p:p+1], 1, nil)) > 0 {
				h.partly[p] = u
				break
			}
		}
	}
	return h
}

// previousStatement returns the user's newest message before u that is
// not a question and not superseded, -1 if none.
func previousStatement(f *found, h *overrides, u int) int {
	for p := u - 1; p >= 0; p-- {
		if t := strings.TrimSpace(f.users[p].text); !h.superseded(p) && !strings.HasSuffix(t, "?") {
			return p
		}
	}
	return -1
}

// statesChoice reports whether a user message can be a choice a later
// "scratch that" withdraws: a short statement (under 40 words, one
// paragraph), not a question.
func statesChoice(text string) bool {
	t := strings.TrimSpace(text)
	return t != "" && !strings.HasSuffix(t, "?") && !strings.Contains(t, "\n") && len(strings.Fields(t)) < 40
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
	head := strings.TrimLeft(text, " \t\n*_>")
	if len(head) > 48 {
		head = head[:48] // the longest opening is far shorter
	}
	head = strings.ToLower(normalizeQuotes(head))
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
	if len(h.by) == 0 && len(h.partly) == 0 {
		return users
	}
	out := append([]userMsg(nil), users...)
	for u := range h.by {
		out[u].text = supersededMark + out[u].text
	}
	for u := range h.partly {
		if !h.superseded(u) {
			out[u].text = partlyMark + out[u].text
		}
	}
	return out
}

// partlyMark opens the quote of a user message part of which a later one
// handed to someone else.
const partlyMark = "[partly superseded by a later message] "

// handovers returns the user messages that handed work to someone else,
// in order.
func (h *overrides) handovers(users []userMsg) []userMsg {
	var out []userMsg
	for u := range users {
		for _, v := range h.partly {
			if v == u {
				out = append(out, users[u])
				break
			}
		}
	}
	return out
}

// decisionLines writes the Key Decisions: the user's decisions in force
// that replaced an earlier plan, what they superseded, the user's other
// choices, then the assistant's decisions, those the user turned down
// marked as rejected.
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
	for _, s := range userSentences(h.inForce(f.users), userChoiceWords, o.MaxItems) {
		if !slices.ContainsFunc(h.holding, func(u int) bool { return strings.Contains(f.users[u].text, s) }) {
			out = append(out, "- Decided by the user: "+oneLineText(s))
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
	"will handle", "handles", "takes care of", "assigned to", "belongs to", "is owned by", "owner of", "only forwards",
	"is doing", "will do", "works on", "is working on", "takes the", "is on the", "picks up", "takes over")

// ownerHeads open a list of who owns what ("Owners:", "Assignments:").
var ownerHeads = newPhrases("owner", "owners", "who does what", "assignment", "assignments", "assigned", "responsible")

// roleLines returns the user's lines that say who does or owns what, word
// for word, the newest max distinct ones, oldest first: who owns what is
// lost when only the names survive. A line with an arrow ("Alice ->
// migration"), a sentence with an owner word ("the worker owns
// retries"), and each "task: owner" item of a list under an "Owners:"
// line count. A line that shares two content words with a later
// handover (handovers) is marked as superseded by it.
func roleLines(users []userMsg, max int, handovers []userMsg) []string {
	var all []string
	for _, u := range users {
		// A list under an "Owners:" line: each "task: owner" item.
		head := ""
		for l := range unfencedLines(u.text) {
			if ownerHeads.match(l) && strings.HasSuffix(strings.TrimSpace(l), ":") {
				head = strings.TrimSpace(l)
				continue
			}
			if item := strings.TrimSpace(stripListMarker(l)); head != "" && item != l && strings.Contains(item, ": ") {
				all = append(all, cutRunes(head+" "+item, 300))
				continue
			}
			head = ""
		}
		for l := range proseLines(u.text) {
			if (strings.Contains(l, "->") || strings.Contains(l, "=>") || strings.Contains(l, "→")) && roleArrow.MatchString(l) {
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
	for i, l := range all {
		// A line a later handover changed says so, with the handover.
		for _, ho := range handovers {
			if !strings.Contains(ho.text, l) && sharedWords(l, facts.ContentWords(ho.text, -1)) >= 2 {
				all[i] = l + " (superseded later: " + oneLineText(cutRunes(ho.text, 200)) + ")"
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

// queueWords mark a user sentence that puts work in the queue for later.
var queueWords = newPhrases("next step is", "the next step", "after that", "when you're done", "when you are done",
	"once that", "once this", "still open", "nobody has done", "don't forget to", "do not forget to",
	"remember to", "later on", "afterwards", "at some point", "before we ship", "before release",
	"when you get to it", "on the list", "do what you did", "same thing for", "same change for")

// queuedItems returns the user's sentences that queue work for later,
// the newest max distinct ones, oldest first, from the messages in force.
func queuedItems(users []userMsg, max int) []string {
	return userSentences(users, queueWords, max)
}

// userSentences returns the user's sentences holding one of the phrases,
// not questions, the newest max distinct ones, oldest first; a short
// message (one paragraph, under 60 words) is taken whole, with what its
// references point at.
func userSentences(users []userMsg, p *phrases, max int) []string {
	var all []string
	for _, u := range users {
		if t := strings.TrimSpace(u.text); !strings.Contains(t, "\n") && len(strings.Fields(t)) < 60 {
			if p.match(t) && !strings.HasSuffix(t, "?") {
				all = append(all, cutRunes(t, 400))
			}
			continue
		}
		for _, s := range matchSentences(u.text, p) {
			if !strings.HasSuffix(s, "?") {
				all = append(all, s)
			}
		}
	}
	return newestUnique(all, max)
}

// userChoiceWords find a user's message that makes a choice.
var userChoiceWords = newPhrases("let's use", "let's go with", "go with", "we'll use", "switch to", "pick the",
	"choose the", "the first option", "the second option", "the third option", "the last option", "the first one",
	"the second one", "the third one", "decided")

// A constraint is often told as a story rather than a rule: "someone ran
// the migrations against prod last week and it locked the main table.
// Local database this time." A short user message that tells of a past
// mishap (a time or someone, and damage) is kept as a constraint whole.
var (
	pastWords   = newPhrases("someone", "somebody", "last week", "last month", "last time", "last year", "the last pr", "the last release", "remember when", "yesterday", "on tuesday", "on monday", "on friday", "once")
	damageWords = newPhrases("broke", "wiped", "locked", "lost", "reverted", "blew up", "took down", "corrupted", "deleted", "bounced", "overwrote", "failed", "outage", "force-pushed")
)

// incidents returns the user's short messages that tell of a past mishap,
// as lessons to keep, the newest max distinct ones, oldest first.
func incidents(users []userMsg, max int) []string {
	var all []string
	for _, u := range users {
		t := strings.TrimSpace(u.text)
		if strings.Contains(t, "\n") || len(strings.Fields(t)) >= 60 || strings.HasSuffix(t, "?") {
			continue
		}
		if pastWords.match(t) && damageWords.match(t) {
			all = append(all, cutRunes(t, 400))
		}
	}
	return newestUnique(all, max)
}
