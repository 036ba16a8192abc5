package compact

import (
	"encoding/json"
	"strings"

	"github.com/compactkit/compact/internal/jsontext"
)

// IsShellTool reports whether a tool of this name runs shell commands:
// pi's "bash", and the names other agents give their shell tools (shell,
// run_shell_command, exec_command, run_terminal_cmd, ...). The name is
// compared without regard to case. Summarizers and benchmarks use it to
// read a call's command line, whose file operations and exit status
// FileOps and the tool's name alone do not tell.
func IsShellTool(name string) bool {
	switch strings.ToLower(name) {
	case "bash", "shell", "sh", "zsh", "run_shell_command", "exec_command", "execute_command",
		"run_command", "run_shell", "run_terminal_cmd", "terminal", "local_shell", "container.exec":
		return true
	}
	return false
}

// ShellCommand returns the command line of a shell tool call: its
// "command", "cmd" or "script" argument, the first that is set. A command
// given as a vector of words is joined with spaces, except that the
// script of a vector such as ["bash", "-lc", "make test"] is returned
// alone. It returns "" when the call has none of these arguments.
func ShellCommand(call *ToolCall) string {
	for _, k := range [...]string{"command", "cmd", "script"} {
		if s, ok := jsontext.TopLevelString(call.Arguments, k); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(call.Arguments, &args) != nil {
		return ""
	}
	for _, k := range [...]string{"command", "cmd"} {
		var words []string
		if json.Unmarshal(args[k], &words) != nil || len(words) == 0 {
			continue
		}
		if n := len(words); n >= 3 && strings.HasPrefix(words[n-2], "-") && strings.Contains(words[n-2], "c") &&
			IsShellTool(words[0][strings.LastIndexByte(words[0], '/')+1:]) {
			return strings.TrimSpace(words[n-1])
		}
		return strings.TrimSpace(strings.Join(words, " "))
	}
	return ""
}
