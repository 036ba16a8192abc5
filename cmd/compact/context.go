package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/session"
	"github.com/compactkit/compact/tiktoken"
)

// previewChars is how much of a long message "compact context" prints
// without --full.
const previewChars = 400

// contextReport is the JSON form of "compact context".
type contextReport struct {
	File     string               `json:"file"`
	Leaf     string               `json:"leaf"`
	Model    string               `json:"model"`
	Provider string               `json:"provider"`
	Context  compact.ContextUsage `json:"context"`
	// Counter names what counted the messages after the last usage
	// report: an OpenAI encoding (o200k_base, cl100k_base) for OpenAI
	// models, else "estimate".
	Counter  string                `json:"counter"`
	Messages []contextMessageEntry `json:"messages"`
}

type contextMessageEntry struct {
	EntryID string `json:"entryId"`
	// Tokens is the estimate of the message (characters / 4).
	Tokens  int             `json:"tokens"`
	Message json.RawMessage `json:"message"`
}

func (a *app) contextCommand() *cobra.Command {
	var leaf string
	var full, original bool
	cmd := &cobra.Command{
		Use:   "context FILE",
		Short: "Print the messages the model would see now",
		Long: `Context prints the messages the model sees at the session's leaf, in order:
the latest compaction's summary (as the model receives it), the messages
that compaction kept, and everything after it.

Each message is shown as "#i [role] (entry ID, ~N tokens)" followed by its
text. Tool calls are written name(arguments) and tool results carry their
tool's name. Texts longer than 400 characters are shortened unless --full
is given.

Messages that a cheap strategy (context_edit entries) replaced show the
replacement, as the model sees them; --original shows the stored messages
instead, uncut.

With --json the output is {"model", "messages": [{"entryId", "tokens",
"message"}]}, each message in pi's JSON form; the summary has the role
"compactionSummary".`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			return a.context(cmd, args[0], leaf, full, original)
		}),
	}
	cmd.Flags().StringVar(&leaf, "leaf", "", "entry id to show the context of instead of the current leaf")
	a.addFormatFlag(cmd)
	cmd.Flags().BoolVar(&full, "full", false, "print every message in full")
	cmd.Flags().BoolVar(&original, "original", false, "show the stored messages, without the replacements of context edits")
	return cmd
}

func (a *app) context(cmd *cobra.Command, file, leaf string, full, original bool) error {
	if _, err := a.loadSettings(cmd, nil); err != nil {
		return err
	}
	s, err := a.openRead(file, leaf)
	if err != nil {
		return err
	}
	ctx := s.Context()
	if original {
		orig := compact.BuildOriginalContext(s.Path())
		orig.Provider, orig.Model = ctx.Provider, ctx.Model
		ctx = orig
	}
	usage, counter := compact.Measure(ctx), counterEstimate
	if tc, ok := tiktoken.ForModel(ctx.Model); ok {
		usage, counter = compact.MeasureWith(ctx, tc.MessageTokens), tc.Name()
	}
	if a.jsonOut {
		r := contextReport{File: file, Leaf: s.Leaf(), Model: ctx.Model, Provider: ctx.Provider, Context: usage, Counter: counter,
			Messages: make([]contextMessageEntry, 0, len(ctx.Messages))}
		for i, m := range ctx.Messages {
			raw, err := session.EncodeMessage(m)
			if err != nil {
				return fmt.Errorf("%s: entry %s: %w", file, ctx.EntryIDs[i], err)
			}
			r.Messages = append(r.Messages, contextMessageEntry{EntryID: ctx.EntryIDs[i], Tokens: m.Tokens(), Message: raw})
		}
		return writeJSON(a.stdout, r)
	}
	w := a.stdout
	model := ctx.Model
	if model == "" {
		model = "(none named)"
	} else if ctx.Provider != "" {
		model = ctx.Provider + "/" + model
	}
	counted := ""
	if counter != counterEstimate {
		counted = " (" + counter + " after the last usage report)"
	}
	fmt.Fprintf(w, "%s at leaf %s: model %s, %s, %s tokens%s\n", file, s.Leaf(), model, plural(len(ctx.Messages), "message"), numfmt.Thousands(usage.Tokens), counted)
	limit := previewChars
	if full {
		limit = 0
	}
	for i, m := range ctx.Messages {
		fmt.Fprintf(w, "\n#%d [%s] (entry %s, ~%s tokens)\n", i, roleLabel(m), ctx.EntryIDs[i], numfmt.Thousands(m.Tokens()))
		text := messageText(m)
		if i == 0 && m.Role == compact.RoleCompactionSummary {
			// As the model receives it, with the continuation note after
			// an automatic compaction.
			text = ctx.ModelMessages()[0].Text()
		}
		if text != "" {
			fmt.Fprintln(w, shorten(text, limit))
		}
	}
	return nil
}
