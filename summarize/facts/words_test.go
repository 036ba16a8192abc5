package facts

import (
	"slices"
	"testing"
)

func TestContentWords(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  []string
	}{
		{"Please fix the flaky login test in auth_test.go, thanks!", -1, []string{"fix", "flaky", "login", "test", "auth_test.go"}},
		{"Export as CSV through the API, not XML", -1, []string{"export", "csv", "through", "api", "xml"}},
		{"Let's use Redis. Actually, let's NOT use Redis: use Memcached.", -1, []string{"redis", "actually", "memcached"}},
		{"--dry-run and ...trailing... dots", -1, []string{"dry-run", "trailing", "dots"}},
		{"one two three four five six seven", 2, []string{"two", "three"}},
		{"a an the of", -1, nil},
	}
	for _, tt := range tests {
		if got := ContentWords(tt.in, tt.limit); !slices.Equal(got, tt.want) {
			t.Errorf("ContentWords(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}
