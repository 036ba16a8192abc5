package fakeupstream

import "strings"

// HandoverMark is a line of every hand-over Handover writes, so that a
// test can tell the fake model's summary in a request or a store.
const HandoverMark = "Hand-over written by the fake model."

// The parts of compact's summary prompt (package summarize) that Handover
// reads. They are written here again, not imported, so that the fake is
// a second reader of the format: a change to the prompt that a model
// would stumble on shows up as a failing test.
const (
	transcriptTag   = "<transcript>\n"
	runningTag      = "<running-summary>\n"
	firstRequestTag = "The session's first request, word for word: "
	userBlock       = "[user]\n"
	turnHeading     = "## Turn Request"
)

// IsSummaryPrompt reports whether text is the prompt of one of compact's
// summary requests: it quotes a transcript.
func IsSummaryPrompt(text string) bool { return strings.Contains(text, transcriptTag) }

// Handover is what a model that follows compact's summary prompt answers
// to prompt: the headings the prompt asks for (a split turn's when it asks
// for Turn Request, else Goal, Progress and Next Steps), the session's
// request carried over word for word (the Goal of the running summary, its
// quote of the first request, or the transcript's first user message, in
// that order), HandoverMark, and enough words that a review of replies far
// too short for the history they replace lets it through.
func Handover(prompt string) string {
	request := ""
	if _, after, ok := strings.Cut(prompt, runningTag+"## Goal\n- "); ok {
		request, _, _ = strings.Cut(after, "\n")
	} else if _, after, ok := strings.Cut(prompt, firstRequestTag); ok {
		request, _, _ = strings.Cut(after, "\n")
	} else if _, after, ok := strings.Cut(prompt, transcriptTag+userBlock); ok {
		request, _, _ = strings.Cut(after, "\n\n")
	}
	request = strings.Join(strings.Fields(request), " ")
	const next = "Carry on with the request above from where the transcript ends, running the next step " +
		"and checking its output before moving on to the one after it."
	if strings.Contains(prompt, turnHeading) {
		return "## Turn Request\n- " + request + "\n\n## Work So Far in This Turn\n- " + HandoverMark +
			"\n\n## Context for the Kept Messages\n- " + next
	}
	return "## Goal\n- " + request + "\n\n## Progress\n- " + HandoverMark + "\n\n## Next Steps\n1. " + next
}
