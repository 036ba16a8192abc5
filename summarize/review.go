package summarize

import (
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/summarize/facts"
)

// The review a model's reply passes before it may stand for the history.
// Once a summary is recorded the messages it covers leave the context, so
// a reply that refuses the task, apologises, says almost nothing, ignores
// the headings or forgets what the user asked for would erase the
// session's task. The checks are deliberately plain and conservative: they
// look for what a usable hand-over cannot lack, not for good style.
//
// The files the agent touched are not checked: the engine appends its own
// lists of them to every summary. The problems name no conversation text,
// so that they can go to logs and stored details.

// reviewMinWords is the fewest words a reply may have, whatever the span;
// a longer span asks for one word per reviewWordsPerWord words of it, up
// to reviewMaxMinWords.
const (
	reviewMinWords     = 8
	reviewWordsPerWord = 20
	reviewMaxMinWords  = 40
)

// refusalStarts open a reply that declines, apologises or talks to the
// reader instead of writing notes; matched on the reply's first words,
// lower-cased, with typographic apostrophes made plain.
var refusalStarts = []string{
	"i'm sorry", "i am sorry", "sorry,", "sorry but", "sorry -", "i apologize", "i apologise", "my apologies",
	"apologies,", "unfortunately, i", "unfortunately i", "i can't", "i cannot", "i can not", "i'm unable",
	"i am unable", "i'm not able", "i am not able", "i won't", "i will not", "as an ai", "as a language model",
}

// refusalPhrases decline the task anywhere in a short reply.
var refusalPhrases = []string{
	"can't help with", "cannot help with", "can't assist", "cannot assist", "unable to help", "unable to assist",
	"not able to help", "can't comply", "cannot comply", "can't provide", "cannot provide", "won't be able to",
}

// Review checks text, a model's answer to req, and returns what makes it
// unusable as the summary, nil when nothing does. spanWords is the size
// in words of what the answer replaces (the transcript it was given, and
// the running summary it merged); 0 skips the length check.
//
// A reply is refused when it is a refusal or an apology, when it has
// fewer words than the span calls for (at least 8, one per 20 words of
// span up to 40), when it lacks a heading no hand-over can do without
// (Goal and Next Steps; Turn Request for a turn prefix), or when it loses the session's request: too few of the
// words of req.FirstRequest, or for a history starting the session of its
// first user message, appear in it.
func Review(req *compact.SummaryRequest, text string, spanWords int) []string {
	var problems []string
	text = strings.TrimSpace(text)
	words := strings.Fields(text)
	if isRefusal(text, len(words)) {
		problems = append(problems, "it is a refusal or an apology, not notes")
	}
	if need := min(max(reviewMinWords, spanWords/reviewWordsPerWord), reviewMaxMinWords); len(words) < need {
		problems = append(problems, "it is far too short for what it replaces ("+
			strconv.Itoa(len(words))+" words, at least "+strconv.Itoa(need)+" needed)")
	}
	kind := compact.SummaryHistory
	if req != nil {
		kind = req.Kind
	}
	if missing := missingHeadings(kind, text); len(missing) > 0 {
		problems = append(problems, "it lacks the headings "+strings.Join(missing, ", "))
	}
	if req != nil {
		if first := sessionRequest(req); first != "" && !keepsRequest(text, first) {
			problems = append(problems, "it loses the user's request")
		}
	}
	return problems
}

// isRefusal reports whether a reply of n words declines the task.
func isRefusal(text string, n int) bool {
	head := strings.ToLower(strings.NewReplacer("\u2019", "'", "\u2018", "'").Replace(text))
	head = strings.TrimLeft(head, "#*>_ \t\n")
	for _, p := range refusalStarts {
		if strings.HasPrefix(head, p) {
			return true
		}
	}
	if n > 120 || hasHeading(text) {
		// Notes may quote a refusal (an API's "cannot provide", a user's
		// "I can't"); a reply that declines the task has no headings.
		return false
	}
	for _, p := range refusalPhrases {
		if strings.Contains(head, p) {
			return true
		}
	}
	return false
}

// requiredHeadings are the headings a reply of each kind cannot lack,
// whatever else it renames or merges: what the agent is to achieve and
// what it does next. Each is one the prompt asks for (a test checks).
func requiredHeadings(kind compact.SummaryKind) []string {
	if kind == compact.SummaryTurnPrefix {
		return []string{"Turn Request"}
	}
	return []string{"Goal", "Next Steps"}
}

// hasHeading reports whether text has a Markdown heading line.
func hasHeading(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			return true
		}
	}
	return false
}

// missingHeadings returns the required headings of kind that text lacks.
// A heading is a Markdown heading line or a line in bold; it matches when
// its key (compact.SummaryHeadingKey) contains the required one's or is
// contained in it ("## Next steps", "**Goal:**", "## Goal of the session").
func missingHeadings(kind compact.SummaryKind, text string) []string {
	var have []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#") {
			have = append(have, compact.SummaryHeadingKey(strings.TrimLeft(line, "# ")))
		} else if strings.HasPrefix(line, "**") && strings.HasSuffix(strings.TrimRight(line, ":"), "**") {
			have = append(have, compact.SummaryHeadingKey(line))
		}
	}
	var missing []string
	for _, h := range requiredHeadings(kind) {
		k, ok := compact.SummaryHeadingKey(h), false
		for _, g := range have {
			if g != "" && (strings.Contains(g, k) || strings.Contains(k, g)) {
				ok = true
				break
			}
		}
		if !ok {
			missing = append(missing, h)
		}
	}
	return missing
}

// askedHeadings returns the top-level headings the prompt of kind asks
// for, read from the prompt itself so that the two never disagree.
func askedHeadings(kind compact.SummaryKind) []string {
	var out []string
	for _, line := range strings.Split(taskText(kind, false, false), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			out = append(out, strings.TrimSpace(h))
		}
	}
	return out
}

// sessionRequest returns the request the summary must keep, in the user's
// words (without the harness's reminders): the session's first request
// when an earlier compaction summarized it, else the first user message
// of a span that starts the session (or the turn, for a turn prefix). ""
// when the span does not hold it.
func sessionRequest(req *compact.SummaryRequest) string {
	if req.FirstRequest != nil {
		return usersWords(req.FirstRequest)
	}
	if req.Kind == compact.SummaryHistory && req.PreviousSummary != "" {
		return "" // the previous summary carries it, in its own words
	}
	for _, m := range req.Messages {
		if t := usersWords(m); m.Role == compact.RoleUser && t != "" && !compact.IsInterruptionNotice(t) {
			return t
		}
	}
	return ""
}

// usersWords is a user message's text without the reminders an agent's
// harness writes into it (Claude Code's <system-reminder> blocks): the
// words a summary must carry over are the user's.
func usersWords(m *compact.Message) string {
	return strings.TrimSpace(compact.WithoutReminders(m.Text()))
}

// requestWords is how many distinct content words of the request are
// looked for, and keepsRequest wants a quarter of them (at least one, at
// most three) in the reply.
const requestWords = 24

// keepsRequest reports whether text keeps enough of the request's content
// words (four letters or more, the commonest English words left out) to
// show it was carried over, in the user's words or close to them.
func keepsRequest(text, request string) bool {
	want := facts.ContentWords(request, requestWords)
	if len(want) == 0 {
		return true
	}
	have := map[string]bool{}
	for _, w := range facts.ContentWords(text, -1) {
		have[w] = true
	}
	n := 0
	for _, w := range want {
		if have[w] {
			n++
		}
	}
	return n >= min(max(1, len(want)/4), 3)
}

// review is the gate every model reply passes, on either path: a reply
// Review refuses is asked for once more with again, given the retry note
// that names its problems; a second refused reply fails the summary with
// a *compact.SummaryRejectedError, so that the history is never replaced
// by it. It returns the text to use, the first reply's problems (none when
// it passed) and the error of the second ask or the rejection.
func (s *Summarizer) review(req *compact.SummaryRequest, text string, spanWords int, again func(note string) (string, error)) (string, []string, error) {
	problems := Review(req, text, spanWords)
	if len(problems) == 0 {
		return text, nil, nil
	}
	text, err := again("\n\n" + strings.ReplaceAll(retryNote, "{problems}", strings.Join(problems, "; ")))
	if err != nil {
		return "", problems, err
	}
	if second := Review(req, text, spanWords); len(second) > 0 {
		return "", problems, &compact.SummaryRejectedError{Summarizer: s.opts.Model, Problems: second}
	}
	return text, problems, nil
}
