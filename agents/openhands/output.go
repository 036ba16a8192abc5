package openhands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
	"github.com/compactkit/compact/internal/redact"
)

// OutputFile is the name OpenHands gives the file of an evaluation or
// resolver run.
const OutputFile = "output.jsonl"

// ErrInstance means that the instance to read from an output.jsonl is
// not known: the file holds several and none was named, or none with the
// id named. The error's text lists the ids the file holds and ends with
// ErrInstance's own, "name one".
var ErrInstance = errors.New("name one")

// ErrNotOutput means an instance was named for a file that is an event
// stream, not an evaluation or resolver output.jsonl.
var ErrNotOutput = errors.New("this is one event stream, not an evaluation or resolver " + OutputFile)

// maxIDsListed is how many instance ids an error lists.
const maxIDsListed = 20

// instance is one line of an output.jsonl.
type instance struct {
	id      string
	line    int
	members []jsonrec.Member
	history json.RawMessage
}

// ReadOutput reads one instance of an OpenHands evaluation or resolver
// output.jsonl held in memory: each line is one instance, an EvalOutput
// {instance_id, test_result, instruction, metadata, history, metrics,
// error, instance} or a ResolverOutput {issue, issue_type, instruction,
// base_commit, git_patch, history, metrics, success, ...}, whose history
// is the run's event stream (a list of events, or in old files a list of
// [action, observation] pairs). The instance is named by id: its
// instance_id, or for a resolver run the issue's number. With id "" the
// file must hold one instance. Otherwise the error wraps ErrInstance and
// lists the ids.
//
// The events become entries as in Read; the instance's other members
// become a first custom entry "openhands:instance", with credentials
// (redact.String) replaced. Transcript.SessionID is the instance id.
func ReadOutput(data []byte, name, id string) (*compact.Transcript, error) {
	var all []instance
	lineNo := 0
	for rest := data; len(rest) > 0; {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")))
		if len(line) == 0 {
			continue
		}
		inst, err := parseInstance(line, lineNo)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lineNo, err)
		}
		all = append(all, inst)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no instances (an OpenHands output.jsonl holds one JSON object per line)", name)
	}
	pick := -1
	switch {
	case id == "" && len(all) == 1:
		pick = 0
	case id == "":
		return nil, fmt.Errorf("%s: OpenHands %s of %d instances (%s): %w", name, OutputFile, len(all), listIDs(all), ErrInstance)
	default:
		for i, inst := range all {
			if inst.id == id {
				pick = i
				break
			}
		}
		if pick < 0 {
			return nil, fmt.Errorf("%s: no instance %q; the file holds %s: %w", name, id, listIDs(all), ErrInstance)
		}
	}
	return readInstance(all[pick], name)
}

// listIDs lists the instance ids, at most maxIDsListed of them.
func listIDs(all []instance) string {
	ids := make([]string, 0, min(len(all), maxIDsListed))
	for i, inst := range all {
		if i == maxIDsListed {
			ids = append(ids, fmt.Sprintf("and %d more", len(all)-i))
			break
		}
		ids = append(ids, strconv.Quote(inst.id))
	}
	return strings.Join(ids, ", ")
}

// parseInstance reads the members of one line and its id. Errors name
// the member at fault.
func parseInstance(line []byte, lineNo int) (instance, error) {
	members, err := jsonrec.Object(line)
	if err != nil {
		return instance{}, noLine(err)
	}
	inst := instance{line: lineNo, members: members}
	var issue json.RawMessage
	for _, m := range members {
		switch m.Key {
		case "instance_id":
			if inst.id, err = idText(m.Value); err != nil {
				return instance{}, fmt.Errorf("instance_id: %w", err)
			}
		case "issue":
			issue = m.Value
		case "history":
			inst.history = m.Value
		}
	}
	if inst.id == "" && issue != nil {
		f, err := jsonrec.Fields(issue)
		if err != nil {
			return instance{}, fmt.Errorf("issue%w", err)
		}
		if inst.id, err = idText(f["number"]); err != nil {
			return instance{}, fmt.Errorf("issue.number: %w", err)
		}
	}
	if inst.id == "" {
		return instance{}, errors.New("neither instance_id nor issue.number: not an OpenHands evaluation or resolver output line")
	}
	if inst.history == nil || jsonrec.IsNull(inst.history) {
		return instance{}, fmt.Errorf("instance %q: no history", inst.id)
	}
	return inst, nil
}

// idText is a string or integer id as text.
func idText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" {
		return s, nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if _, err := n.Int64(); err == nil {
			return n.String(), nil
		}
	}
	return "", errors.New("not a string or an integer")
}

// readInstance converts the history of inst and puts the instance's other
// members first.
func readInstance(inst instance, name string) (*compact.Transcript, error) {
	where := fmt.Sprintf("%s:%d: instance %q", name, inst.line, inst.id)
	els, err := jsonrec.Array(inst.history, "history", inst.history, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, noLine(err))
	}
	var raws []rawEvent
	for i, e := range els {
		switch t := bytes.TrimSpace(e.Raw); {
		case len(t) > 0 && t[0] == '{':
			raws = append(raws, rawEvent{raw: e.Raw, name: name, line: inst.line})
		case len(t) > 0 && t[0] == '[':
			// An [action, observation] pair of the old format.
			pair, err := jsonrec.Array(e.Raw, fmt.Sprintf("history[%d]", i), e.Raw, 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, noLine(err))
			}
			for j, p := range pair {
				if pt := bytes.TrimSpace(p.Raw); len(pt) == 0 || pt[0] != '{' {
					return nil, fmt.Errorf("%s: history[%d][%d]: not an event object", where, i, j)
				}
				raws = append(raws, rawEvent{raw: p.Raw, name: name, line: inst.line})
			}
		default:
			return nil, fmt.Errorf("%s: history[%d]: not an event object", where, i)
		}
	}
	t, err := build(raws, name)
	if err != nil {
		return nil, err
	}
	t.SessionID = inst.id
	var rest bytes.Buffer
	rest.WriteByte('{')
	n := 0
	for _, m := range inst.members {
		if m.Key == "history" {
			continue
		}
		if n > 0 {
			rest.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(m.Key)
		rest.Write(k)
		rest.WriteByte(':')
		rest.Write(m.Value)
	}
	rest.WriteByte('}')
	var data bytes.Buffer
	if err := json.Compact(&data, []byte(redact.String(rest.String()))); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	taken := map[string]bool{}
	for _, e := range t.Entries {
		taken[e.ID] = true
	}
	entryID := "instance"
	for taken[entryID] {
		entryID += "x"
	}
	head := &compact.Entry{ID: entryID, Kind: compact.KindCustom, Timestamp: t.Timestamp,
		Meta: &compact.EntryMeta{CustomType: Format + ":instance", Data: json.RawMessage(data.Bytes())}}
	t.Entries = append([]*compact.Entry{head}, t.Entries...)
	return t, nil
}

// noLine drops the "LINE: " that jsonrec's errors start with: within one
// line of the file (or one member of it) the line is always 1, and the
// caller names the file's line. The result wraps err.
func noLine(err error) error {
	if n, msg, ok := strings.Cut(err.Error(), ": "); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return &linelessError{msg: msg, err: err}
	}
	return err
}

// linelessError is an error with another text.
type linelessError struct {
	msg string
	err error
}

func (e *linelessError) Error() string { return e.msg }
func (e *linelessError) Unwrap() error { return e.err }
