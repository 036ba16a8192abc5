package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
)

// forkReport is the JSON form of "compact fork".
type forkReport struct {
	File    string `json:"file"`
	At      string `json:"at"`
	Output  string `json:"output"`
	Entries int    `json:"entries"`
}

func (a *app) forkCommand() *cobra.Command {
	var at, out string
	cmd := &cobra.Command{
		Use:   "fork FILE --at ID -o OUT",
		Short: "Write the path up to an entry as a new session file",
		Long: `Fork writes a new session file OUT holding the entries from the root of
FILE to the entry ID (with their labels), under a new header whose
parentSession names FILE. FILE is not changed. OUT must not exist: fork
never overwrites a file.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			s, err := a.openChecked(cmd, args[0])
			if err != nil {
				return err
			}
			if s.Entry(at) == nil {
				// The same wording as an unknown --leaf (see openAt).
				return fmt.Errorf("%s: --at %q: %w", args[0], at, compact.ErrNoEntry)
			}
			forked, err := s.Fork(at, out)
			if err != nil {
				return err
			}
			r := forkReport{File: args[0], At: at, Output: out, Entries: forked.Len()}
			if a.jsonOut {
				return writeJSON(a.stdout, r)
			}
			fmt.Fprintf(a.stdout, "forked %s at %s into %s (%s)\n", r.File, r.At, r.Output, plural(r.Entries, "entry"))
			return nil
		}),
	}
	cmd.Flags().StringVar(&at, "at", "", "id of the last entry to copy (required)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "path of the new session file; must not exist (required)")
	_ = cmd.MarkFlagRequired("at")
	_ = cmd.MarkFlagRequired("output")
	return cmd
}
