package summarize

import (
	"embed"
	"strings"

	"github.com/compactkit/compact"
)

// The prompts are plain Markdown files so that they can be read and
// reviewed as text. Every request is the system prompt plus one user
// message laid out as
//
//	<running-summary> ... </running-summary>   (only when merging)
//	<transcript> ... </transcript>
//	task text (intro file + headings file)
//	focus text and <focus> ... </focus>        (only with instructions)
//
// The data comes first and the task last, so that the instructions are
// the freshest thing the model reads.
//
//go:embed prompts/*.md
var promptFiles embed.FS

// Tags that delimit the parts of the user message.
const (
	tagTranscript = "transcript"
	tagSummary    = "running-summary"
	tagFocus      = "focus"
)

func mustPrompt(name string) string {
	b, err := promptFiles.ReadFile("prompts/" + name)
	if err != nil {
		panic("summarize: missing embedded prompt " + name)
	}
	return strings.TrimSpace(string(b))
}

var (
	systemPrompt         = mustPrompt("system.md")
	historyIntro         = mustPrompt("history.md")
	updateIntro          = mustPrompt("update.md")
	historySections      = mustPrompt("sections.md")
	prefixIntro          = mustPrompt("prefix.md")
	prefixUpdateIntro    = mustPrompt("prefix_update.md")
	prefixSectionsPrompt = mustPrompt("prefix_sections.md")
	focusIntro           = mustPrompt("focus.md")
	retryNote            = mustPrompt("retry.md")
	ledgerNote           = mustPrompt("ledger.md")
	conversationIntro    = mustPrompt("conversation.md")
	conversationHistory  = mustPrompt("conversation_history.md")
	conversationPrefix   = mustPrompt("conversation_prefix.md")
)

// SystemPrompt returns the system prompt sent with every request.
func SystemPrompt() string { return systemPrompt }

// taskText returns the instructions for a request of the given kind,
// with or without a running summary to merge into, and with the note on
// the record compact attaches (ledger) for a history summary that gets one.
func taskText(kind compact.SummaryKind, merging, ledger bool) string {
	switch {
	case kind == compact.SummaryTurnPrefix && merging:
		return prefixUpdateIntro + "\n\n" + prefixSectionsPrompt
	case kind == compact.SummaryTurnPrefix:
		return prefixIntro + "\n\n" + prefixSectionsPrompt
	}
	intro := historyIntro
	if merging {
		intro = updateIntro
	}
	if ledger {
		return intro + "\n\n" + historySections + "\n\n" + ledgerNote
	}
	return intro + "\n\n" + historySections
}

// buildPrompt assembles the user message: the running summary (if any),
// the transcript, the task and the focus (if any).
func buildPrompt(kind compact.SummaryKind, summary, transcript, instructions string, ledger bool) string {
	var b strings.Builder
	b.Grow(len(summary) + len(transcript) + len(instructions) + 2048)
	if summary != "" {
		writeTagged(&b, tagSummary, summary)
		b.WriteString("\n\n")
	}
	writeTagged(&b, tagTranscript, transcript)
	b.WriteString("\n\n")
	b.WriteString(taskText(kind, summary != "", ledger))
	if instructions != "" {
		b.WriteString("\n\n")
		b.WriteString(focusIntro)
		b.WriteString("\n\n")
		writeTagged(&b, tagFocus, instructions)
	}
	return b.String()
}

// writeTagged writes body between <tag> and </tag> lines. A closing tag
// of the same name inside the body is defused so that quoted text cannot
// end the block early.
func writeTagged(b *strings.Builder, tag, body string) {
	b.WriteString("<" + tag + ">\n")
	b.WriteString(defuse(body, tag))
	b.WriteString("\n</" + tag + ">")
}

// defuse rewrites "</tag" inside quoted text as "<\/tag".
func defuse(s, tag string) string {
	closing := "</" + tag
	if !strings.Contains(s, closing) {
		return s
	}
	return strings.ReplaceAll(s, closing, `<\/`+tag)
}
