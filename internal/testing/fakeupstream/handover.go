package fakeupstream

import (
	"bytes"
	"strings"
)

// HandoverMark is a line of every hand-over Handover writes, so that a
// test can tell the fake model's summary in a request or a store.
const HandoverMark = "Hand-over written by the fake model."

// The parts of compact's summary prompt (package summarize) that Handover
// reads. They are written here again, not imported, so that the fake is
// a second reader of the format: a change to the prompt that a model
// would stumble on shows up as a failing test.
const (
	transcriptTag   = "<transcript>\n"
	firstRequestTag = "The session's first request, word for word: "
	userBlock       = "[user]\n"
	turnHeading     = "## Turn Request"
	// A summary asked on the conversation itself (summarize's
	// Options.Conversation) quotes a split turn's request under this
	// label, and says that tools are off.
	turnRequestTag   = "The turn's request, word for word: "
	conversationMark = "Do not call any tool"
)

// withoutReminders drops the <system-reminder>…</system-reminder> blocks
// of s and returns its first paragraph that is left.
func withoutReminders(s string) string {
	for {
		i := strings.Index(s, "<system-reminder>")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "</system-reminder>")
		if j < 0 {
			s = s[:i]
			break
		}
		s = s[:i] + s[i+j+len("</system-reminder>"):]
	}
	for _, p := range strings.Split(s, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			return p
		}
	}
	return ""
}

// IsSummaryPrompt reports whether text is the prompt of one of compact's
// summary requests: it quotes a transcript, or it is the closing
// instruction of a summary asked on the conversation itself.
func IsSummaryPrompt(text string) bool {
	return strings.Contains(text, transcriptTag) || strings.Contains(text, conversationMark)
}

// IsAgentTurn reports whether body, a request of api, is an agent's own
// turn: it offers tools and is not one of compact's summary requests (a
// transcript quoted without tools, or the conversation itself closed by
// the summary task, its tools made uncallable).
func IsAgentTurn(api API, body []byte) bool {
	return bytes.Contains(body, []byte(`"tools"`)) && !IsSummaryPrompt(Prompt(api, body))
}

// headingsTask is the sentence of compact's summary task that asks for
// the hand-over headings (summarize/prompts/sections.md and
// prefix_sections.md). A summary written from it holds the headings but
// not the sentence.
const headingsTask = "Use these headings"

// asksForHandover reports whether text, the last user message of a
// request that quotes no transcript, closes a conversation with compact's
// summary task. Such a request is answered with Handover of the
// conversation before it.
func asksForHandover(text string) bool {
	return strings.Contains(text, headingsTask)
}

// Handover is what a model that follows compact's summary prompt answers
// to prompt: the headings the prompt asks for (a split turn's when it asks
// for Turn Request, else Goal, Progress and Next Steps), the session's
// request carried over word for word (the running summary's quote of the
// first request, its Goal or Turn Request, the Goal or Turn Request of an
// earlier summary the transcript holds, or the transcript's first user message without
// the harness's reminders: the first of them that is not empty), HandoverMark, and enough words that a review of replies far
// too short for the history they replace lets it through.
func Handover(prompt string) string {
	request := ""
	for _, tag := range []string{firstRequestTag, turnRequestTag} {
		if _, after, ok := strings.Cut(prompt, tag); ok && strings.TrimSpace(request) == "" {
			// The whole quote: a request runs over several lines.
			request, _, _ = strings.Cut(after, "\n\n")
			request = withoutReminders(request)
		}
	}
	if running, _, ok := strings.Cut(prompt, "</running-summary>"); ok && strings.TrimSpace(request) == "" {
		// The running summary's Goal, else the request of a turn an
		// earlier compaction split ("No earlier history." then its Turn
		// Request).
		for _, h := range []string{"## Goal\n- ", "## Turn Request\n- "} {
			if _, after, ok := strings.Cut(running, h); ok {
				request, _, _ = strings.Cut(after, "\n")
				break
			}
		}
	}
	if _, after, ok := strings.Cut(prompt, transcriptTag); ok && strings.TrimSpace(request) == "" {
		// An earlier summary in the conversation itself (a summary asked
		// on the conversation sees the previous one as a message): its
		// Goal, or the request of the turn it split, as a model reading
		// it would take it.
		conv, _, _ := strings.Cut(after, "</transcript>")
		for _, h := range []string{"## Goal\n- ", "## Turn Request\n- "} {
			if _, line, ok := strings.Cut(conv, h); ok {
				request, _, _ = strings.Cut(line, "\n")
				break
			}
		}
	}
	if _, after, ok := strings.Cut(prompt, transcriptTag); ok && strings.TrimSpace(request) == "" {
		// The transcript's first user block (it may open with system
		// text), without the reminders an agent writes into the user's
		// turn (Claude Code's <system-reminder>).
		if _, block, ok := strings.Cut(after, userBlock); ok {
			block, _, _ = strings.Cut(block, "\n\n[")
			request = withoutReminders(block)
		}
	}
	request = strings.Join(strings.Fields(request), " ")
	const next = "Carry on with the request above from where the transcript ends, running the next step " +
		"and checking its output before moving on to the one after it."
	// The task follows the transcript; a running summary or the
	// transcript may quote a Turn Request heading of their own.
	task := prompt
	if i := strings.LastIndex(prompt, "</transcript>"); i >= 0 {
		task = prompt[i:]
	}
	if strings.Contains(task, turnHeading) {
		return "## Turn Request\n- " + request + "\n\n## Work So Far in This Turn\n- " + HandoverMark +
			"\n\n## Context for the Kept Messages\n- " + next
	}
	return "## Goal\n- " + request + "\n\n## Progress\n- " + HandoverMark + "\n\n## Next Steps\n1. " + next
}
