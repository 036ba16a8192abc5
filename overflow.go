package compact

import (
	"errors"
	"strings"
)

// IsContextOverflow reports whether err says the request did not fit in
// the model's context window.
func IsContextOverflow(err error) bool {
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	if pe.StatusCode == 413 {
		return true
	}
	body := strings.ToLower(pe.Body)
	return strings.Contains(body, "context length") || strings.Contains(body, "context window") ||
		strings.Contains(body, "prompt is too long")
}
