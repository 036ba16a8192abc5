package facts

import "github.com/compactkit/compact"

// FilesTouched returns the files the messages show read, written or
// edited: those of the file tools (compact.FileOps.AddMessage), those of
// the command lines of shell tool calls (compact.IsShellTool) and those
// of the commands the user ran ("!cmd", compact.RoleBash), whatever the
// call's outcome.
func FilesTouched(msgs []*compact.Message) compact.FileOps {
	var ops compact.FileOps
	for _, m := range msgs {
		AddFiles(&ops, m)
	}
	return ops
}

// AddFiles records in ops the file operations of one message: its file
// tool calls and the command lines of its shell tool calls (assistant
// messages), or the user's own command (bash executions).
func AddFiles(ops *compact.FileOps, m *compact.Message) {
	if m == nil {
		return
	}
	switch m.Role {
	case compact.RoleAssistant:
		ops.AddMessage(m)
		for _, call := range m.ToolCalls() {
			if compact.IsShellTool(call.Name) {
				AddShellFiles(ops, compact.ShellCommand(call))
			}
		}
	case compact.RoleBash:
		AddShellFiles(ops, m.Metadata().Command)
	}
}

// FileList is every file of ops, read or modified, sorted, each once.
func FileList(ops *compact.FileOps) []string {
	read, modified := ops.Lists()
	return mergeSorted(read, modified)
}

func mergeSorted(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
