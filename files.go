package compact

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/compactkit/compact/internal/jsontext"
)

// FileOps accumulates the files an agent read, wrote and edited, as seen
// in its tool calls. The zero value is empty and ready to use.
type FileOps struct {
	Read    map[string]bool
	Written map[string]bool
	Edited  map[string]bool
}

func (f *FileOps) add(set *map[string]bool, path string) {
	path = strings.TrimSpace(path)
	if path == "" {
		return
	}
	if *set == nil {
		*set = make(map[string]bool)
	}
	(*set)[path] = true
}

// AddMessage records the file operations of an assistant message's tool
// calls. It knows pi's tools (read, write, edit with "path") and the
// common names of other agents: Read, Write, Edit, MultiEdit and
// NotebookEdit (Claude Code, "file_path"), read_file / write_file /
// edit_file ("path", "file_path" or "filePath"), Cline's and Roo Code's
// write_to_file, replace_in_file, apply_diff, insert_content and
// search_and_replace (and their read_file and apply_diff naming several
// files as <file><path>…</path></file> elements of an "args" argument),
// the str_replace editor tools (by their "command"), and apply_patch
// (paths from the patch's "*** Add/Update/Delete File:" and "*** Move
// to:" lines).
func (f *FileOps) AddMessage(m *Message) {
	if m.Role != RoleAssistant {
		return
	}
	for i := range m.Content {
		if p := &m.Content[i]; p.Type == PartToolCall && p.ToolCall != nil {
			f.addCall(p.ToolCall)
		}
	}
}

func (f *FileOps) addCall(call *ToolCall) {
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := jsontext.TopLevelString(call.Arguments, k); ok && s != "" {
				return s
			}
		}
		return ""
	}
	path := call.FilePath
	switch call.Name {
	case "read", "Read", "read_file", "view_file":
		f.add(&f.Read, path())
		f.addArgsPaths(&f.Read, str("args"))
	case "write", "Write", "write_file", "create_file", "write_to_file":
		f.add(&f.Written, path())
	case "edit", "Edit", "MultiEdit", "multi_edit", "edit_file", "replace_in_file", "apply_diff",
		"insert_content", "search_and_replace":
		f.add(&f.Edited, path())
		f.addArgsPaths(&f.Edited, str("args"))
	case "NotebookEdit":
		f.add(&f.Edited, str("notebook_path", "path"))
	case "str_replace_editor", "str_replace_based_edit_tool", "text_editor":
		switch str("command") {
		case "view":
			f.add(&f.Read, path())
		case "create":
			f.add(&f.Written, path())
		case "str_replace", "insert", "undo_edit":
			f.add(&f.Edited, path())
		}
	case "apply_patch", "applyPatch":
		patch := str("input", "patch", "patchText", "diff")
		if patch == "" {
			// Some agents pass the patch as a bare string or as a command
			// array whose last element is the patch.
			var args struct {
				Command []string `json:"command"`
			}
			if json.Unmarshal(call.Arguments, &args) == nil && len(args.Command) > 0 {
				patch = args.Command[len(args.Command)-1]
			}
		}
		f.addPatch(patch)
	}
}

// addArgsPaths records the files that an XML "args" argument names as
// <path>…</path> elements, one per <file> (Roo Code's multi-file
// read_file and apply_diff).
func (f *FileOps) addArgsPaths(set *map[string]bool, args string) {
	for {
		i := strings.Index(args, "<path>")
		if i < 0 {
			return
		}
		args = args[i+len("<path>"):]
		j := strings.Index(args, "</path>")
		if j < 0 {
			return
		}
		f.add(set, args[:j])
		args = args[j+len("</path>"):]
	}
}

// addPatch reads the file headers of an apply_patch envelope.
func (f *FileOps) addPatch(patch string) {
	for _, line := range strings.Split(patch, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "*** Add File:"):
			f.add(&f.Written, strings.TrimPrefix(line, "*** Add File:"))
		case strings.HasPrefix(line, "*** Update File:"):
			f.add(&f.Edited, strings.TrimPrefix(line, "*** Update File:"))
		case strings.HasPrefix(line, "*** Delete File:"):
			f.add(&f.Edited, strings.TrimPrefix(line, "*** Delete File:"))
		case strings.HasPrefix(line, "*** Move to:"):
			f.add(&f.Written, strings.TrimPrefix(line, "*** Move to:"))
		}
	}
}

// AddCompaction carries over the file lists of an earlier compaction, so
// that files touched before it stay listed after the next one. Entries
// written by a hook are not trusted and are skipped.
func (f *FileOps) AddCompaction(c *Compaction) {
	if c == nil || c.FromHook {
		return
	}
	for _, p := range c.ReadFiles {
		f.add(&f.Read, p)
	}
	for _, p := range c.ModifiedFiles {
		f.add(&f.Edited, p)
	}
}

// Lists returns the files only read (sorted) and the files written or
// edited (sorted). A file both read and modified is listed as modified.
func (f *FileOps) Lists() (readFiles, modifiedFiles []string) {
	modified := make(map[string]bool, len(f.Written)+len(f.Edited))
	for p := range f.Written {
		modified[p] = true
	}
	for p := range f.Edited {
		modified[p] = true
	}
	for p := range f.Read {
		if !modified[p] {
			readFiles = append(readFiles, p)
		}
	}
	for p := range modified {
		modifiedFiles = append(modifiedFiles, p)
	}
	sort.Strings(readFiles)
	sort.Strings(modifiedFiles)
	return readFiles, modifiedFiles
}
