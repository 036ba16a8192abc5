package sweagent

import (
	"encoding/json"

	"github.com/compactkit/compact/internal/jsonrec"
)

// chosenAttempt returns the history of the last attempt of a RetryAgent
// file that has no top-level copy of the chosen one.
func chosenAttempt(data []byte, attempts jsonrec.Member) (jsonrec.Member, bool) {
	if attempts.Value == nil {
		return jsonrec.Member{}, false
	}
	list, err := jsonrec.Array(data, "attempts", attempts.Value, attempts.Off)
	if err != nil || len(list) == 0 {
		return jsonrec.Member{}, false
	}
	last := list[len(list)-1]
	fields, err := jsonrec.Object(last.Raw)
	if err != nil {
		return jsonrec.Member{}, false
	}
	for _, f := range fields {
		if f.Key == "history" {
			return jsonrec.Member{Key: f.Key, Value: f.Value, Off: last.Off + f.Off}, true
		}
	}
	return jsonrec.Member{}, false
}

// modelName returns replay_config's agent.model.name; replay_config is an
// object or a string holding one.
func modelName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var rc struct {
		Agent struct {
			Model struct {
				Name string `json:"name"`
			} `json:"model"`
		} `json:"agent"`
	}
	_ = json.Unmarshal(raw, &rc)
	return rc.Agent.Model.Name
}

// workingDir returns the working_dir of the first trajectory step that
// records one; state is an object or, in older files, a string holding
// one.
func workingDir(raw json.RawMessage) string {
	var steps []struct {
		State json.RawMessage `json:"state"`
	}
	_ = json.Unmarshal(raw, &steps)
	for _, st := range steps {
		state := st.State
		var s string
		if json.Unmarshal(state, &s) == nil {
			state = json.RawMessage(s)
		}
		var v struct {
			WorkingDir string `json:"working_dir"`
		}
		if json.Unmarshal(state, &v) == nil && v.WorkingDir != "" {
			return v.WorkingDir
		}
	}
	return ""
}
