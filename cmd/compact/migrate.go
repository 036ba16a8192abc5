package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact/session"
)

// migrateReport is the JSON form of "compact migrate".
type migrateReport struct {
	File        string `json:"file"`
	FromVersion int    `json:"fromVersion"`
	ToVersion   int    `json:"toVersion"`
	Migrated    bool   `json:"migrated"`
}

func (a *app) migrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate FILE",
		Short: "Rewrite an old session file in the current format (version 3)",
		Long: `Migrate rewrites a session file of version 1 or 2 as version 3: entries get
ids and parent links, compactions name their first kept entry by id, and
the old hookMessage role becomes custom. Unknown entry types and fields are
kept as they are. The new file is written next to the old one, synced and
renamed over it, so an interruption leaves one or the other. It keeps the
old file's mode, owner and group; a symbolic link stays a link and its
target is rewritten.

Migrate refuses a file whose mode allows no writing, and one that changed
since it was read or changes while the new file is written (FILE is locked
against other compact commands meanwhile; an agent such as pi takes no
lock, so do not migrate a session an agent is using). Before it rewrites
FILE, it removes the temporary files that killed runs left beside it
(.FILE.tmp-NNN, when no running process holds them).

A file that is already version 3 is left unchanged. Every other command
reads old files as they are, without rewriting them.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			s, err := a.openChecked(cmd, args[0])
			if err != nil {
				return err
			}
			from := s.Header().Version
			changed, err := s.Migrate()
			if err != nil {
				return err
			}
			r := migrateReport{File: args[0], FromVersion: from, ToVersion: session.CurrentVersion, Migrated: changed}
			if a.jsonOut {
				return writeJSON(a.stdout, r)
			}
			if changed {
				fmt.Fprintf(a.stdout, "%s: migrated from version %d to %d\n", r.File, from, session.CurrentVersion)
			} else {
				fmt.Fprintf(a.stdout, "%s: already version %d, unchanged\n", r.File, from)
			}
			return nil
		}),
	}
}
