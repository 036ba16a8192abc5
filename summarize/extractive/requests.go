package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Which user message states the work under way, and what a short reply
// means: a handoff that reads "Most recently: ok" or "Most recently:
// yeah, do it all" tells the next model nothing. The request in force is
// the latest message that set the assistant working; a reply to a
// question is shown with the question it answers.

const (
	// maxAfterQuestion is how much prose may follow an assistant's
	// question for a reply to count as its answer: a question early in
	// a long answer is rhetorical or already answered in the text.
	maxAfterQuestion = 600
	// replyContextChars is how much of the assistant's text before its
	// question a reply is shown with.
	replyContextChars = 300
	// maxReplyWords is the longest user message shown with the question
	// it answers; a longer one says enough by itself.
	maxReplyWords = 40
	// latestTaskLabel introduces, in the Goal, the latest request the
	// assistant worked on when later messages only asked or remarked.
	latestTaskLabel = "Latest task worked on: "
)

// openQuestion reports whether an assistant's text ends by asking the
// user something: a sentence outside code that ends with "?" and is
// followed by at most maxAfterQuestion characters of prose.
func openQuestion(text string) bool {
	after := -1
	for l := range unfencedLines(text) {
		for s := range sentences(strings.TrimSpace(stripListMarker(l))) {
			switch {
			case strings.HasSuffix(s, "?"):
				after = 0
			case after >= 0:
				after += len(s)
			}
		}
	}
	return after >= 0 && after <= maxAfterQuestion
}

// replyContext returns, on one line, the end of an assistant's text up to
// and including its last question: the question with the paragraphs
// before it that fit in replyContextChars characters (the proposal a
// short reply accepts or rejects), never a report of finished work (a
// reply to "Done: … Shall I also …?" is about the question alone). A
// question paragraph longer than that keeps its end, after "…".
func replyContext(text string) string {
	if i := strings.LastIndexByte(text, '?'); i >= 0 {
		text = text[:i+1]
	}
	paras := strings.Split(normalizeNewlines(text), "\n\n")
	flat := func(p string) string { return strings.Join(strings.Fields(p), " ") }
	out := flat(paras[len(paras)-1])
	for k := len(paras) - 2; k >= 0; k-- {
		p := flat(paras[k])
		if p == "" {
			continue
		}
		if utf8.RuneCountInString(p)+utf8.RuneCountInString(out)+1 > replyContextChars || reportsDone(p) || finishedList(paras[k]) {
			break
		}
		out = p + " " + out
	}
	if utf8.RuneCountInString(out) <= replyContextChars {
		return out
	}
	start := len(out)
	for n := 0; n < replyContextChars && start > 0; n++ {
		_, size := utf8.DecodeLastRuneInString(out[:start])
		start -= size
	}
	if i := strings.IndexByte(out[start:], ' '); i >= 0 {
		start += i + 1
	}
	return "…" + out[start:]
}

// finishedList reports whether a paragraph is a list whose items all
// report finished work.
func finishedList(p string) bool {
	items := 0
	for l := range strings.SplitSeq(p, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || stripListMarker(t) == t {
			continue
		}
		if !finishedItem(stripListMarker(t)) {
			return false
		}
		items++
	}
	return items > 0
}

// requestText is a user message as the Goal and Next Steps show it: its
// text, shortened to n characters, and for a short reply to the
// assistant's question, the question with what led to it.
func requestText(u userMsg, n int) string {
	t := shorten(userText(u), n)
	if isShortReply(u) {
		t += " (in reply to the assistant: «" + replyContext(u.asked) + "»)"
	}
	return t
}

// isShortReply reports whether a user message answers the assistant's
// question in too few words to be read without it.
func isShortReply(u userMsg) bool {
	return u.asked != "" && len(strings.Fields(u.text)) <= maxReplyWords
}

// ackWords are the words of a message that only acknowledges.
var ackWords = map[string]bool{
	"ok": true, "okay": true, "k": true, "kk": true, "thanks": true, "thank": true, "you": true, "thx": true,
	"ty": true, "nice": true, "great": true, "cool": true, "perfect": true, "good": true, "awesome": true,
	"lgtm": true, "wow": true, "yo": true, "alright": true, "got": true, "it": true, "noted": true,
	"understood": true, "i": true, "see": true, "ah": true, "oh": true, "hm": true, "hmm": true, "fine": true,
}

// isAcknowledgement reports whether a user message only acknowledges
// ("ok", "thanks!", "nice 👍") and so asks for nothing. An answer such as
// "yes" or "sure" is not one: it accepts a proposal.
func isAcknowledgement(text string) bool {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) == 0 || len(words) > 4 {
		return len(words) == 0 && strings.TrimSpace(text) != ""
	}
	for _, w := range words {
		if !ackWords[w] {
			return false
		}
	}
	return true
}

// latestSaid returns the index of the last user message that is not an
// acknowledgement, or of the last message when all are; -1 when there
// are none.
func latestSaid(users []userMsg) int {
	for i := len(users) - 1; i >= 0; i-- {
		// "ok" to a question is an answer, not an acknowledgement.
		if users[i].images > 0 || users[i].asked != "" || !isAcknowledgement(users[i].text) {
			return i
		}
	}
	return len(users) - 1
}

// latestTask returns the index of the last user message that set the
// assistant working (a tool call followed it), -1 when none did.
func latestTask(users []userMsg) int {
	for i := len(users) - 1; i >= 0; i-- {
		if users[i].worked {
			return i
		}
	}
	return -1
}

// askedBefore records that the span's first message, when it is the
// user's, answers the assistant's text before the span (the question a
// split turn's request replies to, compact.SummaryRequest.Asked).
func (f *found) askedBefore(text string) {
	if len(f.users) > 0 && f.users[0].idx == 0 && openQuestion(text) {
		f.users[0].asked = text
	}
}
