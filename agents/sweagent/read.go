package sweagent

import (
	"fmt"
	"strconv"

	"github.com/compactkit/compact"
	"github.com/compactkit/compact/internal/jsonrec"
)

// Format is the name of this format in a Transcript and on the command
// line.
const Format = "swe-agent"

// ReadFile reads the trajectory in the file at path.
func ReadFile(path string) (*compact.Transcript, error) {
	return jsonrec.ReadFile(path, "read SWE-agent trajectory", Read)
}

// Read parses a trajectory held in memory. name is used in errors and
// warnings, which give the line of the record at fault.
func Read(data []byte, name string) (*compact.Transcript, error) {
	members, err := jsonrec.Object(data)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	r := &builder{name: name, data: data, calls: map[string]string{},
		t: &compact.Transcript{Format: Format, Unknown: map[string]int{}}}
	byKey := map[string]jsonrec.Member{}
	for _, m := range members {
		byKey[m.Key] = m
	}
	history, ok := byKey["history"]
	if !ok {
		if history, ok = chosenAttempt(data, byKey["attempts"]); !ok {
			return nil, fmt.Errorf("%s:1: field history: missing (not a SWE-agent trajectory)", name)
		}
	}
	items, err := jsonrec.Array(data, "field history", history.Value, history.Off)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	r.t.Model = modelName(byKey["replay_config"].Value)
	r.t.Cwd = workingDir(byKey["trajectory"].Value)

	// What comes before the conversation: the run's set-up.
	for _, m := range members {
		r.at("member "+m.Key, m.Value)
		switch m.Key {
		case "history", "trajectory", "info":
		case "environment", "replay_config", "attempts":
			r.custom(m.Key, m.Value)
		default:
			r.t.Unknown[m.Key]++
			r.custom(m.Key, m.Value)
		}
	}
	err = jsonrec.EachElement(data, "history", items, func(i int, it jsonrec.Element) error {
		r.at("history "+strconv.Itoa(i), it.Raw)
		return r.item(it)
	})
	if err != nil {
		return nil, fmt.Errorf("%s:%w", name, err)
	}
	// What comes after it: the steps as run, and the run's result.
	for _, key := range [...]string{"trajectory", "info"} {
		if m, ok := byKey[key]; ok {
			r.at("member "+key, m.Value)
			r.custom(key, m.Value)
		}
	}
	jsonrec.SafeExtras(r.t, Format)
	jsonrec.OneLine(r.t)
	return r.t, nil
}
