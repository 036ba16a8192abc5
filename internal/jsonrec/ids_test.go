package jsonrec

import "testing"

func TestIDs(t *testing.T) {
	type call struct {
		pos     string
		content string
	}
	tests := []struct {
		name  string
		take  []string
		calls []call
	}{
		{"distinct records", nil, []call{{"line 1", "a"}, {"line 2", "b"}, {"line 3", "a"}}},
		{"several entries from one line", nil, []call{{"line 1", "a"}, {"line 1", "a"}, {"line 1", "a"}}},
		{"ids the file uses are avoided", []string{"x"}, []call{{"line 1", ""}, {"line 2", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := func() []string {
				var s IDs
				for _, id := range tc.take {
					s.Take(id)
				}
				var out []string
				for _, c := range tc.calls {
					out = append(out, s.Derive(c.pos, []byte(c.content)))
				}
				return out
			}
			first, second := run(), run()
			seen := map[string]bool{}
			for _, id := range tc.take {
				seen[id] = true
			}
			for i, id := range first {
				if id != second[i] {
					t.Errorf("call %d: id %q, then %q on the second read", i, id, second[i])
				}
				if len(id) != 8 || seen[id] {
					t.Errorf("call %d: id %q is not 8 hex digits or not unique", i, id)
				}
				seen[id] = true
			}
		})
	}
	// The id depends on both the position and the content.
	var s IDs
	a, b, c := s.Derive("line 1", []byte("x")), s.Derive("line 2", []byte("x")), s.Derive("line 1", []byte("y"))
	var fresh IDs
	if a == b || a == c || fresh.Derive("line 1", []byte("y")) != c {
		t.Errorf("ids %q %q %q: want position and content to count, and nothing else", a, b, c)
	}
	if !s.Take("new") || s.Take("new") || s.Take(a) {
		t.Error("Take: a free id must be taken once, a derived one never again")
	}
}
