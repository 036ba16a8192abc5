package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/agents"
	"github.com/compactkit/compact/session"
)

// importReport is the JSON form of "compact import".
type importReport struct {
	File        string         `json:"file"`
	Format      string         `json:"format"`
	Output      string         `json:"output"`
	Entries     int            `json:"entries"`
	Messages    int            `json:"messages"`
	Compactions int            `json:"compactions"`
	Unknown     map[string]int `json:"unknown"`
	Warnings    []string       `json:"warnings"`
}

func (a *app) importCommand() *cobra.Command {
	var out, cwd string
	cmd := &cobra.Command{
		Use:   "import FILE -o OUT.jsonl",
		Short: "Convert another agent's session to a pi session file",
		Long: `Import reads another agent's session (its format detected from the
content, or named by --format) and writes it as a new pi session file OUT
(version 3), which pi and every compact command can continue:

` + formatList() + `

An OpenHands evaluation or resolver output.jsonl holds one instance a
line: --instance names the one to import (an instance_id, or the issue
number of a resolver run); a file of one instance needs none. Anything
else fails with one line saying what FILE holds and what to read instead.

Tool calls, results, usage and the agent's own compactions become pi
entries; what a pi message has no field for is kept in extra fields of
the entry, and records that are no messages are kept as custom entries,
so nothing of FILE is lost. Record types the reader does not know are
counted and reported. FILE is not changed; OUT must not exist.

pi refuses to continue a session whose working directory does not exist
on this machine: --cwd sets the one written into OUT.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			if _, err := a.loadSettings(cmd, nil); err != nil {
				return err
			}
			file := args[0]
			f, err := a.importFormat(file)
			if err != nil {
				return err
			}
			if f.Name == agents.Pi && a.instance != "" {
				return usagef("--instance %s: %s is a pi session, which holds one conversation", a.instance, file)
			}
			if f.Name == agents.Pi {
				return fmt.Errorf("%s: already a pi session (use compact fork to copy it, or --format to name its real format)", file)
			}
			if _, err := os.Lstat(out); err == nil {
				return fmt.Errorf("-o %s: the file exists; import never overwrites a file", out)
			}
			if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
				return usagef("-o %s: folder %s does not exist", out, filepath.Dir(out))
			}
			t, err := a.readTranscript(file, f)
			if err != nil {
				return err
			}
			if cwd != "" {
				t.Cwd = cwd
			}
			if fi, err := os.Stat(cwd); cwd != "" && (err != nil || !fi.IsDir()) {
				// Not an error: the session may be continued on another
				// machine. The agent's own folder is not checked: it is
				// the one of the machine the file came from.
				w := fmt.Sprintf("--cwd %s: no such folder on this machine; pi refuses to continue a session whose working directory does not exist", cwd)
				a.warn(w)
				t.Warnings = append(t.Warnings, w)
			}
			// The converted session is read back before it is written.
			s, err := session.FromTranscript(t, file, session.Options{})
			if err != nil {
				return fmt.Errorf("%s: the converted session does not read back: %w", file, err)
			}
			if err := s.SaveAs(out); err != nil {
				return fmt.Errorf("-o %w", err)
			}
			r := importReport{File: file, Format: f.Name, Output: out, Entries: s.Len(),
				Unknown: t.Unknown, Warnings: t.Warnings}
			if r.Unknown == nil {
				r.Unknown = map[string]int{}
			}
			if r.Warnings == nil {
				r.Warnings = []string{}
			}
			for _, e := range s.Entries() {
				switch {
				case e.Kind == compact.KindCompaction:
					r.Compactions++
				case e.IsContextMessage():
					r.Messages++
				}
			}
			if a.jsonOut {
				return writeJSON(a.stdout, r)
			}
			fmt.Fprintf(a.stdout, "imported %s (%s) into %s: %s, %s, %s\n", file, f.Name, out,
				plural(r.Entries, "entry"), plural(r.Messages, "message"), plural(r.Compactions, "compaction"))
			return nil
		}),
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "path of the new pi session file; must not exist (required)")
	cmd.Flags().StringVar(&cwd, "cwd", "", "working directory to record in the new session (default: the agent's own)")
	a.addFormatFlag(cmd)
	_ = cmd.MarkFlagRequired("output")
	return cmd
}

// importFormat is the format of the file import converts: --format when
// given, else the detected one. Unlike the commands that only read, import
// takes no unrecognised file for a pi session: it fails with Detect's
// description of the content.
func (a *app) importFormat(path string) (agents.Format, error) {
	if a.format != "" {
		return a.fileFormat(path)
	}
	return agents.Detect(path)
}

// formatList lists the formats import reads, one a line: the name and
// what the files are (agents.Formats, the one list of them).
func formatList() string {
	var b strings.Builder
	for i, f := range agents.Formats() {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-13s %s", f.Name, f.What)
	}
	return b.String()
}
