package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
)

// pinReport is the JSON form of "compact pin".
type pinReport struct {
	File string `json:"file"`
	ID   string `json:"id"`
	// Pinned is the state after the command.
	Pinned bool `json:"pinned"`
	// Group holds the entries pinned together with ID (a tool call and
	// its results), ID included.
	Group []string `json:"group"`
	// Changed is false when the entry already was in the state asked for
	// and nothing was written.
	Changed bool `json:"changed"`
}

func (a *app) pinCommand() *cobra.Command {
	var unpin bool
	var leaf string
	cmd := &cobra.Command{
		Use:   "pin FILE ID",
		Short: "Pin a message so that compactions keep it word for word",
		Long: `Pin marks the message entry ID of the session FILE as pinned, by
appending one label entry (pi's own entry type, labelled "pinned"; an entry
labelled L before becomes "pinned: L"). A pinned message is never
summarized away: after a compaction it stays in the context word for
word, right after the summary, and it counts first in the part kept
verbatim. A tool call and its results are pinned as one unit, so pinning
either keeps both. The cheap strategies never shorten a pinned message.
Each compaction also copies the pinned messages into its summary, for
agents that do not know pins (pi); compact's own context shows the
messages instead of that copy.

--unpin undoes the pin (the entry gets back the label it had before).
The pin is recorded on the branch of the last entry, or of --leaf.
Nothing else in the file is changed.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("%s: missing the session FILE and entry ID arguments", commandName(cmd))
			case len(args) == 1:
				return usagef("%s: missing the entry ID argument (see compact tree %s for the ids)", commandName(cmd), args[0])
			case len(args) > 2:
				return usagef("%s: takes a session FILE and one entry ID, got %d arguments", commandName(cmd), len(args))
			}
			return nil
		},
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			if _, err := a.loadSettings(cmd, nil); err != nil {
				return err
			}
			file, id := args[0], args[1]
			s, err := a.openAt(file, leaf)
			if err != nil {
				return err
			}
			if s.Entry(id) == nil {
				return fmt.Errorf("%s: entry %q: %w", file, id, compact.ErrNoEntry)
			}
			group, err := compact.PinGroup(s.Path(), id)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if err := s.Appendable(); err != nil {
				return err
			}
			before := s.Len()
			r := pinReport{File: file, ID: id, Group: group, Pinned: !unpin}
			if unpin {
				if _, err := compact.Unpin(cmd.Context(), s, id); err != nil {
					return fmt.Errorf("%s: unpin: %w", file, err)
				}
			} else if err := compact.Pin(cmd.Context(), s, id); err != nil {
				return fmt.Errorf("%s: pin: %w", file, err)
			}
			r.Changed = s.Len() > before
			if a.jsonOut {
				return writeJSON(a.stdout, r)
			}
			what := "entry " + id
			if len(group) > 1 {
				what += " with " + strings.Join(without(group, id), ", ") + " (a tool call and its results)"
			}
			switch {
			case !r.Changed && unpin:
				fmt.Fprintf(a.stdout, "%s was not pinned in %s; nothing written\n", what, file)
			case !r.Changed:
				fmt.Fprintf(a.stdout, "%s is already pinned in %s; nothing written\n", what, file)
			case unpin:
				fmt.Fprintf(a.stdout, "unpinned %s in %s\n", what, file)
			default:
				fmt.Fprintf(a.stdout, "pinned %s in %s\n", what, file)
			}
			return nil
		}),
	}
	cmd.Flags().BoolVar(&unpin, "unpin", false, "remove the pin instead")
	cmd.Flags().StringVar(&leaf, "leaf", "", "record the pin on the branch ending at this entry (default: the last entry)")
	return cmd
}

// without returns ids without id.
func without(ids []string, id string) []string {
	out := make([]string, 0, len(ids))
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}
