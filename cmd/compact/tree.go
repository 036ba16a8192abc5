package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/numfmt"
	"github.com/compactkit/compact/session"
)

// previewWidth is the length of the one-line previews in the tree.
const previewWidth = 72

// treeReport is the JSON form of "compact tree": every entry in file
// order, with its parent, so that the tree can be rebuilt without deep
// nesting (sessions have thousands of entries in one chain).
type treeReport struct {
	File    string      `json:"file"`
	Leaf    string      `json:"leaf"`
	Entries []treeEntry `json:"entries"`
}

type treeEntry struct {
	ID       string `json:"id"`
	ParentID string `json:"parentId"`
	// Index is the entry's position in the file, the header excluded.
	Index    int    `json:"index"`
	Type     string `json:"type"`
	Role     string `json:"role,omitempty"`
	Preview  string `json:"preview"`
	Label    string `json:"label,omitempty"`
	Children int    `json:"children"`
	Leaf     bool   `json:"leaf,omitempty"`
	// FirstKeptEntryID and TokensBefore are set for compactions.
	FirstKeptEntryID string `json:"firstKeptEntryId,omitempty"`
	TokensBefore     int    `json:"tokensBefore,omitempty"`
}

func (a *app) treeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tree FILE",
		Short: "Print the session's entry tree",
		Long: `Tree prints every entry of the session: its id, type and role, a one-line
preview and its label. The current leaf is marked with "*", and each
compaction says from which entry on it kept the history verbatim.

A chain of entries is printed without indentation; only where the session
branches (an entry with several children) do the branches move one level
in, each starting with "+". Past 24 levels the lines stop moving in and
say their level instead: "(level 25)". With --json the entries are listed flat, in
file order, with their parentId and number of children.`,
		Args: exactFile,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			if _, err := a.loadSettings(cmd, nil); err != nil {
				return err
			}
			s, err := a.openRead(args[0], "")
			if err != nil {
				return err
			}
			if a.jsonOut {
				return writeJSON(a.stdout, newTreeReport(args[0], s))
			}
			printTree(a.stdout, s)
			return nil
		}),
	}
	a.addFormatFlag(cmd)
	return cmd
}

func entryRole(e *compact.Entry) string {
	if e.Message != nil {
		return string(e.Message.Role)
	}
	return ""
}

func newTreeReport(file string, s *session.Session) treeReport {
	r := treeReport{File: file, Leaf: s.Leaf()}
	children := map[string]int{}
	for _, e := range s.Entries() {
		children[e.ParentID]++
	}
	labels := s.Labels()
	for i, e := range s.Entries() {
		te := treeEntry{
			ID: e.ID, ParentID: e.ParentID, Index: i, Type: string(e.Kind), Role: entryRole(e),
			Preview: preview(entryPreview(e), previewWidth), Label: labels[e.ID], Children: children[e.ID],
			Leaf: e.ID == s.Leaf(),
		}
		if e.Compaction != nil {
			te.FirstKeptEntryID = e.Compaction.FirstKeptID
			te.TokensBefore = e.Compaction.TokensBefore
		}
		r.Entries = append(r.Entries, te)
	}
	return r
}

// printTree writes the tree. It walks each chain in a loop and only
// descends a level at branch points, so a session of thousands of
// entries in one chain is printed flat and without deep recursion. Each
// node is printed at most once, so the walk ends whatever the links.
func printTree(w io.Writer, s *session.Session) {
	type branch struct {
		node  *session.Node
		depth int
		mark  bool
	}
	roots := s.Tree()
	var stack []branch
	rootDepth := 0
	if len(roots) > 1 {
		rootDepth = 1
	}
	for i := len(roots) - 1; i >= 0; i-- {
		stack = append(stack, branch{roots[i], rootDepth, len(roots) > 1})
	}
	// The leaf is an entry, not an id: in lenient mode an id may be
	// repeated, and the later entry is the one the id names.
	leaf := s.Entry(s.Leaf())
	seen := make(map[*session.Node]bool)
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		first := true
		for n := b.node; n != nil && !seen[n]; {
			seen[n] = true
			indent := treeIndent(b.depth, b.mark && first)
			first = false
			star := "  "
			if n.Entry == leaf {
				star = "* "
			}
			line := star + indent + treeLine(s, n)
			if len(n.Children) > 1 {
				line += fmt.Sprintf("  [%d branches]", len(n.Children))
			}
			fmt.Fprintln(w, line)
			switch len(n.Children) {
			case 0:
				n = nil
			case 1:
				n = n.Children[0]
			default:
				for i := len(n.Children) - 1; i >= 0; i-- {
					stack = append(stack, branch{n.Children[i], b.depth + 1, true})
				}
				n = nil
			}
		}
	}
}

// maxTreeIndent is the deepest level of the tree that is indented as
// deep; a line further in shows its level instead, so that a session that
// branches thousands of times in a row (a retry after every answer) prints
// lines of bounded width rather than output growing with the square of
// its branch points.
const maxTreeIndent = 24

// treeIndent is the indentation of an entry at level depth: two spaces a
// level, the last two "+ " for the first entry of a branch; past
// maxTreeIndent levels, maxTreeIndent levels and "(level N) ".
func treeIndent(depth int, branchStart bool) string {
	shown := min(depth, maxTreeIndent)
	indent := strings.Repeat("  ", shown)
	if branchStart && shown > 0 {
		indent = strings.Repeat("  ", shown-1) + "+ "
	}
	if depth > maxTreeIndent {
		indent += fmt.Sprintf("(level %d) ", depth)
	}
	return indent
}

// treeLine is the text of one entry in the tree, without indentation.
func treeLine(s *session.Session, n *session.Node) string {
	e := n.Entry
	kind := string(e.Kind)
	if role := entryRole(e); role != "" && e.Kind == compact.KindMessage {
		kind = role
		if e.Message.Role == compact.RoleToolResult && e.Message.ToolName != "" {
			kind += ":" + e.Message.ToolName
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-14s", e.ID, kind)
	if c := e.Compaction; c != nil {
		fmt.Fprintf(&b, " keeps from %s (#%d) on; %s tokens before |", c.FirstKeptID, s.Index(c.FirstKeptID), numfmt.Thousands(c.TokensBefore))
	}
	if p := preview(entryPreview(e), previewWidth); p != "" {
		b.WriteString(" ")
		b.WriteString(p)
	}
	if n.Label != "" {
		fmt.Fprintf(&b, "  [label: %s]", n.Label)
	}
	return strings.TrimRight(b.String(), " ")
}
