package extractive

import (
	"encoding/json"
	"strings"
)

// todoState is the normalized status of a todo item.
type todoState int

const (
	todoPending todoState = iota
	todoActive
	todoDone
	todoCancelled
)

type todoItem struct {
	text  string
	state todoState
}

var nameFolder = strings.NewReplacer("_", "", "-", "", " ", "", ".", "")

// isTodoTool reports whether a tool writes a todo list or plan: names such
// as todo_write, TodoWrite, todowrite, todo, update_todos or update_plan.
// Tools that only read the list are not counted.
func isTodoTool(name string) bool {
	n := nameFolder.Replace(strings.ToLower(name))
	if strings.Contains(n, "read") || strings.HasPrefix(n, "get") {
		return false
	}
	return strings.Contains(n, "todo") || n == "updateplan" || n == "writeplan"
}

// parseTodos reads the items of a todo tool's arguments. It accepts a bare
// array or an object holding the array under a usual key; items are
// strings or objects with a text field (content, text, title, ...) and a
// status field or a done flag.
func parseTodos(raw json.RawMessage) ([]todoItem, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	var list []any
	switch t := v.(type) {
	case []any:
		list = t
	case map[string]any:
		found := false
		for _, k := range []string{"todos", "items", "todoList", "todo_list", "todo", "tasks", "plan", "list", "steps"} {
			if l, ok := t[k].([]any); ok {
				list, found = l, true
				break
			}
		}
		if !found {
			return nil, false
		}
	default:
		return nil, false
	}
	items := make([]todoItem, 0, len(list))
	for _, e := range list {
		switch it := e.(type) {
		case string:
			if s := strings.TrimSpace(it); s != "" {
				items = append(items, markdownTodo(s))
			}
		case map[string]any:
			text := ""
			for _, k := range []string{"content", "text", "title", "task", "description", "step", "name", "subject", "activeForm"} {
				if s, ok := it[k].(string); ok && strings.TrimSpace(s) != "" {
					text = strings.TrimSpace(s)
					break
				}
			}
			if text == "" {
				continue
			}
			state := todoPending
			for _, k := range []string{"status", "state"} {
				if s, ok := it[k].(string); ok {
					state = todoStatus(s)
					break
				}
			}
			for _, k := range []string{"done", "completed", "complete", "checked"} {
				if b, ok := it[k].(bool); ok && b {
					state = todoDone
				}
			}
			items = append(items, todoItem{text: oneLineText(text), state: state})
		}
	}
	return items, true
}

// markdownTodo reads "[x] text" and "[ ] text" items given as strings.
func markdownTodo(s string) todoItem {
	switch {
	case strings.HasPrefix(s, "[x] "), strings.HasPrefix(s, "[X] "):
		return todoItem{text: oneLineText(s[4:]), state: todoDone}
	case strings.HasPrefix(s, "[ ] "):
		return todoItem{text: oneLineText(s[4:]), state: todoPending}
	}
	return todoItem{text: oneLineText(s), state: todoPending}
}

func todoStatus(s string) todoState {
	s = strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
	switch s {
	case "completed", "complete", "done", "finished", "resolved", "closed":
		return todoDone
	case "in_progress", "inprogress", "active", "doing", "started", "working", "current":
		return todoActive
	case "cancelled", "canceled", "skipped", "abandoned", "removed", "dropped":
		return todoCancelled
	}
	return todoPending
}

// oneLineText joins the lines of s with spaces and cuts it to 300
// characters.
func oneLineText(s string) string {
	return cutRunes(strings.Join(strings.Fields(s), " "), 300)
}
