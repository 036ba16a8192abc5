package jsonrec

import "testing"

func TestArgumentsWarning(t *testing.T) {
	for _, tc := range []struct{ where, id, want string }{
		{"a.jsonl:3", "c1", `a.jsonl:3: tool call "c1": arguments are not a JSON object: kept as a string under _raw`},
		{"", "c1", `tool call "c1": arguments are not a JSON object: kept as a string under _raw`},
	} {
		if got := ArgumentsWarning(tc.where, tc.id); got != tc.want {
			t.Errorf("ArgumentsWarning(%q, %q) = %q, want %q", tc.where, tc.id, got, tc.want)
		}
	}
}
