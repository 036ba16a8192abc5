package cline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the format name of this package's transcripts.
const Format = "cline"

// The files of a task directory.
const (
	// APIHistoryFile holds the conversation as sent to the model.
	APIHistoryFile = "api_conversation_history.json"
	// UIMessagesFile holds what the extension showed, with usage and the
	// truncation ranges.
	UIMessagesFile = "ui_messages.json"
)

// Read parses an api_conversation_history.json held in memory, without its
// ui_messages.json (so with only the usage the history itself records).
// name is used in errors and warnings.
func Read(data []byte, name string) (*compact.Transcript, error) {
	return ReadTask(data, nil, name)
}

// ReadTask parses a task from the contents of its
// api_conversation_history.json (api, named name in errors) and its
// ui_messages.json (ui, nil when there is none; named after the file beside
// name).
func ReadTask(api, ui []byte, name string) (*compact.Transcript, error) {
	elems, warn, err := decodeArray(api, name, "message")
	if err != nil {
		return nil, err
	}
	b := &builder{
		name: name,
		t:    &compact.Transcript{Format: Format, Unknown: map[string]int{}},
		open: map[string]string{},
	}
	if warn != "" {
		b.warn("%s", warn)
	}
	b.msgs = make([]*apiMessage, len(elems))
	for i, e := range elems {
		m, err := decodeMessage(e, i)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: message %d: %w", name, e.line, i+1, err)
		}
		b.msgs[i] = m
	}
	if ui != nil {
		msgs, warnings := decodeUI(ui, filepath.Join(filepath.Dir(name), UIMessagesFile))
		for _, w := range warnings {
			b.warn("%s", w)
		}
		b.ui = msgs
	}
	b.build()
	// Extras named as a pi field, in any case, are kept as
	// "cline.<name>".
	jsonrec.SafeExtras(b.t, Format)
	if len(b.t.Unknown) == 0 {
		b.t.Unknown = nil
	}
	return b.t, nil
}

// ReadFile reads a task. path is its api_conversation_history.json, its
// ui_messages.json or the task directory; the ui_messages.json beside the
// history is read when present. The task directory's name (Cline's task
// id) becomes the session id; a task that records no time takes the
// history file's modification time as its start.
func ReadFile(path string) (*compact.Transcript, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	dir, apiPath := filepath.Dir(path), path
	switch {
	case fi.IsDir():
		dir, apiPath = path, filepath.Join(path, APIHistoryFile)
	case filepath.Base(path) == UIMessagesFile:
		apiPath = filepath.Join(dir, APIHistoryFile)
	}
	api, err := os.ReadFile(apiPath)
	if err != nil {
		return nil, err
	}
	ui, err := os.ReadFile(filepath.Join(dir, UIMessagesFile))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		ui = nil
	}
	t, err := ReadTask(api, ui, apiPath)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(dir); err == nil {
		t.SessionID = filepath.Base(abs)
	}
	if t.Timestamp == "" {
		if fi, err := os.Stat(apiPath); err == nil {
			t.Timestamp = jsonrec.Stamp(fi.ModTime())
		}
	}
	return t, nil
}
