package compact

import (
	"strconv"
	"strings"
)

// SummaryPreface opens the user message that carries a compaction summary
// to the model. It tells the model the text is a hand-over from earlier
// work, not a new request.
const SummaryPreface = "The earlier part of this conversation was condensed into the summary below, " +
	"written to hand the work over. Treat it as the record of what already happened and continue from it."

// ContinuationNote follows the summary after an automatic compaction, which
// interrupts the work rather than ending it.
const ContinuationNote = "This condensing happened automatically, in the middle of the work. Carry on from where it stopped: " +
	"do not redo steps the summary records as done, and do not give a final answer until every remaining step is finished."

// BranchPreface opens the user message that carries a branch summary.
const BranchPreface = "The conversation returned here from another branch; this is a summary of that branch."

// SummaryText returns the text of the user message that stands for a
// compaction summary in the model's context: the preface and the summary
// inside <summary> tags.
func SummaryText(summary string) string {
	return SummaryPreface + "\n\n<summary>\n" + summary + "\n</summary>"
}

// ModelMessages returns the context as a chat API accepts it (see
// ForModel). After an automatic compaction (reason threshold or overflow
// recorded in its details) the summary message ends with
// ContinuationNote; after a manual one it does not.
func (c *Context) ModelMessages() []*Message {
	out := ForModel(c.Messages)
	if c.Compaction != nil && len(out) > 0 && c.Messages[0].Role == RoleCompactionSummary && AutomaticCompaction(c.Compaction) {
		out[0] = asUser(c.Messages[0], SummaryText(c.Messages[0].Text())+"\n\n"+ContinuationNote)
	}
	return out
}

// AutomaticCompaction reports whether a compaction entry was made
// automatically (its details record reason threshold or overflow).
func AutomaticCompaction(e *Entry) bool {
	if e == nil || e.Compaction == nil {
		return false
	}
	r, _ := e.Compaction.Details["reason"].(string)
	return r == string(ReasonThreshold) || r == string(ReasonOverflow)
}

// ForModel converts a context into the messages a chat API accepts: user,
// assistant and tool results. Summaries, user-run shell commands and
// custom messages become user messages; shell commands marked as excluded
// from the context are dropped, and so are assistant replies that were
// aborted or failed, with the tool results that answer their calls, as pi
// drops them: they are incomplete turns (a partial text, tool calls that
// never ran) that a provider may refuse and the model should not build
// on. The Meter counts exactly the messages kept here. The input is not
// modified.
func ForModel(msgs []*Message) []*Message {
	out := make([]*Message, 0, len(msgs))
	var sent sendFilter
	for _, m := range msgs {
		if !sent.keep(m) {
			continue
		}
		switch m.Role {
		case RoleCompactionSummary:
			out = append(out, asUser(m, SummaryText(m.Text())))
		case RoleBranchSummary:
			out = append(out, asUser(m, BranchPreface+"\n\n<summary>\n"+m.Text()+"\n</summary>"))
		case RoleBash:
			out = append(out, asUser(m, bashText(m)))
		case RoleCustom:
			u := *m
			u.Role = RoleUser
			if mm := m.Metadata(); mm.CustomType != "" {
				mm.CustomType = ""
				u.Meta = &mm
				if mm.IsZero() {
					u.Meta = nil
				}
			}
			u.ResetTokens()
			out = append(out, &u)
		default:
			out = append(out, m)
		}
	}
	return out
}

func asUser(m *Message, text string) *Message {
	u := TextMessage(RoleUser, text)
	u.Timestamp = m.Timestamp
	return u
}

// bashText renders a shell command the user ran, with its output and a
// failing exit status.
func bashText(m *Message) string {
	run := m.Metadata()
	var b strings.Builder
	b.WriteString("I ran `")
	b.WriteString(run.Command)
	b.WriteString("`")
	if run.Output != "" {
		b.WriteString("\n```\n")
		b.WriteString(run.Output)
		b.WriteString("\n```")
	} else {
		b.WriteString(" (no output)")
	}
	switch {
	case run.Cancelled:
		b.WriteString("\nThe command was cancelled.")
	case run.ExitCode != nil && *run.ExitCode != 0:
		b.WriteString("\nExit status: " + strconv.Itoa(*run.ExitCode))
	}
	return b.String()
}
