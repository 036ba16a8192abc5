// Package redact takes credentials out of texts before they are printed,
// logged or stored: the API keys a caller configured, in every form a
// server may echo them back (as is, JSON-escaped with and without HTML
// escaping), and the texts shaped like credentials whoever configured
// them (Authorization values, api-key labels, "sk-" keys).
//
// The clients (anthropic, openai, internal/apihttp), the proxy and the
// command-line tool all redact through this one package, so that a key
// is hidden the same way wherever an error carries it.
package redact

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Placeholder is what String puts in place of a secret.
const Placeholder = "REDACTED"

// MinSecretLen is the shortest secret String replaces wherever it occurs.
// A shorter string is more likely an ordinary word of the message than a
// key; such keys are still caught by the shapes String knows (a bearer
// token, an api-key header value).
const MinSecretLen = 6

// secretShapes are the texts that look like credentials whoever
// configured them, each with the replacement that keeps its label.
var secretShapes = []struct {
	re   *regexp.Regexp
	with string
}{
	// "Authorization: Bearer <token>", as a server echoing the request's
	// headers writes it.
	{regexp.MustCompile(`(?i)\b(bearer\s+)[^\s"',;\[\]{}\\]+`), "${1}" + Placeholder},
	// The value of an Authorization header in header ("Authorization:
	// Basic v") or JSON ("Authorization":["v"]) form, after its scheme.
	{regexp.MustCompile(`(?i)\b((?:proxy-)?authorization(?:\\?["'])?\s*[:=]\s*\[?\s*(?:\\?["'])?(?:(?:bearer|basic|token|digest)\s+)?)[^\s"',;\[\]{}\\&]+`), "${1}" + Placeholder},
	// The value after an api-key label: x-api-key, api-key, api_key,
	// apikey, in header ("x-api-key: v"), JSON ("x-api-key":["v"], also
	// escaped inside a JSON string) or query (api_key=v) form.
	{regexp.MustCompile(`(?i)\b((?:x-)?api[-_]?key(?:\\?["'])?\s*[:=]\s*\[?\s*(?:\\?["'])?)[^\s"',;\[\]{}\\&]+`), "${1}" + Placeholder},
	// Keys in the shape OpenAI, Anthropic, OpenRouter and many
	// compatible servers give out: "sk-" and at least eight more
	// characters (sk-proj-…, sk-ant-api03-…, sk-or-v1-…).
	{regexp.MustCompile(`\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{7,}`), Placeholder},
}

// String returns s with the credentials in it replaced by Placeholder: every
// one of secrets (the keys the caller configured, when at least
// MinSecretLen bytes long, also in their JSON-escaped form), every
// "Bearer <token>" or "Basic <credentials>", every value labelled as an
// api key, and every token shaped like an "sk-" key. Error texts that
// quote a server's answer pass through it before they are printed,
// logged or stored, since a server may echo the request's headers back.
// String is idempotent: redacting its result changes nothing.
func String(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) < MinSecretLen {
			continue
		}
		for _, form := range secretForms(sec) {
			s = strings.ReplaceAll(s, form, Placeholder)
		}
	}
	for _, sh := range secretShapes {
		s = sh.re.ReplaceAllString(s, sh.with)
	}
	return s
}

// secretForms returns sec as it is and as JSON writes it inside a string,
// with and without HTML escaping, as an echoing server may have encoded it.
func secretForms(sec string) []string {
	forms := []string{sec}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, html := range []bool{true, false} {
		b.Reset()
		enc.SetEscapeHTML(html)
		if enc.Encode(sec) != nil {
			continue
		}
		q := strings.TrimSuffix(b.String(), "\n")
		if f := q[1 : len(q)-1]; f != sec {
			forms = append(forms, f)
		}
	}
	return forms
}

// Error returns err unchanged when its text holds no credential (see
// String), else an error whose text is the redacted one and which wraps
// err, so that errors.Is and errors.As still see through it.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := String(msg, secrets...); r != msg {
		return &redactedError{msg: r, err: err}
	}
	return err
}

// redactedError is an error whose text had credentials taken out.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
