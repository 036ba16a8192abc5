package compact

import (
	"encoding/json"
	"testing"
)

func TestShellCommand(t *testing.T) {
	for _, tt := range []struct {
		name string
		args string
		want string
	}{
		{"bash", `{"command":"  go test ./...\n"}`, "go test ./..."},
		{"exec_command", `{"cmd":["bash","-lc","make build"]}`, "make build"},
		{"shell", `{"command":["/bin/sh","-c","ls -la"]}`, "ls -la"},
		{"shell", `{"command":["git","status"]}`, "git status"},
		{"run_terminal_cmd", `{"script":"echo hi"}`, "echo hi"},
		{"bash", `{"path":"x"}`, ""},
		{"bash", `not json`, ""},
	} {
		c := &ToolCall{Name: tt.name, Arguments: json.RawMessage(tt.args)}
		if got := ShellCommand(c); got != tt.want {
			t.Errorf("ShellCommand(%s %s) = %q, want %q", tt.name, tt.args, got, tt.want)
		}
	}
	for name, want := range map[string]bool{"bash": true, "Bash": true, "run_shell_command": true, "read": false, "bashful": false} {
		if got := IsShellTool(name); got != want {
			t.Errorf("IsShellTool(%q) = %v", name, got)
		}
	}
}
