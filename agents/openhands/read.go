package openhands

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the name of this format in a Transcript and on the command
// line.
const Format = "openhands"

// ReadFile reads the event stream at path: a trajectory file (a JSON
// array of events), a session's events folder (or the session folder
// holding it), one event file in such a folder, which reads the whole
// folder, or an evaluation or resolver output.jsonl that holds one
// instance (ReadFileInstance picks one of several). The session id is the
// name of the folder holding "events", or the instance id.
func ReadFile(path string) (*compact.Transcript, error) {
	return ReadFileInstance(path, "")
}

// ReadFileInstance is ReadFile; when path is an evaluation or resolver
// output.jsonl it reads the instance id (see ReadOutput), and id must be
// "" for any other file.
func ReadFileInstance(path, id string) (*compact.Transcript, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read OpenHands events: %w", err)
	}
	if info.IsDir() {
		if id != "" {
			return nil, notOutput(path, id)
		}
		if sub := filepath.Join(path, "events"); isDir(sub) {
			return readDir(sub)
		}
		return readDir(path)
	}
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "events" && isEventFile(filepath.Base(path)) {
		if id != "" {
			return nil, notOutput(path, id)
		}
		return readDir(dir)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read OpenHands events: %w", err)
	}
	if DetectOutput(data) {
		return ReadOutput(data, path, id)
	}
	if id != "" {
		return nil, notOutput(path, id)
	}
	return Read(data, path)
}

// notOutput is the error for an instance named for an event stream.
func notOutput(path, id string) error {
	return fmt.Errorf("%s: instance %q named, but %w", path, id, ErrNotOutput)
}

// Read parses an event stream held in memory: a JSON array of events, or
// one event. name is used in errors and warnings, which give the line of
// the event at fault.
func Read(data []byte, name string) (*compact.Transcript, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\xef\xbb\xbf")
	var raws []rawEvent
	if len(trimmed) > 0 && trimmed[0] == '{' {
		if _, err := jsonrec.Object(data); err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		raws = []rawEvent{{raw: data, name: name, line: jsonrec.Line(data, len(data)-len(trimmed))}}
	} else {
		els, err := jsonrec.ArrayDocument(data)
		if err != nil {
			return nil, fmt.Errorf("%s:%w", name, err)
		}
		for _, e := range els {
			raws = append(raws, rawEvent{raw: e.Raw, name: name, line: jsonrec.Line(data, e.Off)})
		}
	}
	return build(raws, name)
}

// readDir reads the numbered event files of a session's events folder,
// in the order of their numbers.
func readDir(dir string) (*compact.Transcript, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read OpenHands events: %w", err)
	}
	type numbered struct {
		n    int
		name string
	}
	var files []numbered
	for _, e := range ents {
		if e.IsDir() || !isEventFile(e.Name()) {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimSuffix(e.Name(), ".json"))
		files = append(files, numbered{n, e.Name()})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read OpenHands events: %s: no numbered event files (<n>.json)", dir)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].n < files[j].n })
	raws := make([]rawEvent, 0, len(files))
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read OpenHands events: %w", err)
		}
		if _, err := jsonrec.Object(data); err != nil {
			return nil, fmt.Errorf("%s:%w", path, err)
		}
		raws = append(raws, rawEvent{raw: bytes.TrimSpace(data), name: path, line: 1})
	}
	t, err := build(raws, dir)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(dir); err == nil && filepath.Base(abs) == "events" {
		t.SessionID = filepath.Base(filepath.Dir(abs))
	}
	return t, nil
}

// isEventFile reports whether name is "<n>.json".
func isEventFile(name string) bool {
	n, ok := strings.CutSuffix(name, ".json")
	if !ok || n == "" {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
