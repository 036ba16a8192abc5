package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// IsContextOverflow reports whether err says that the request did not fit
// in the model's context window, so that compacting the history and sending
// it again can succeed. It returns false for nil.
//
// When err is, or wraps, a *ProviderError, the decision rests on that
// error's status and body alone:
//
//   - 429 is never an overflow. Several providers word their
//     tokens-per-minute limits much like an overflow ("Request too large
//     ... reduce the prompt length"), but waiting, not compacting, is the
//     cure.
//   - A body that mentions a rate limit, a per-minute allowance, a quota
//     or an overloaded server is not an overflow either, whatever its
//     status (Groq reports its tokens-per-minute limit as 413).
//   - Otherwise the body is searched, without regard to case, for the
//     phrases the providers use: OpenAI ("maximum context length is",
//     "exceeds the context window", code context_length_exceeded),
//     Anthropic ("prompt is too long"), Google Gemini ("exceeds the
//     maximum number of tokens allowed"), Mistral ("too large for model
//     with"), DeepSeek and vLLM (OpenAI's wording), Groq and Cerebras
//     ("reduce the length of the messages"), xAI ("maximum prompt length
//     is", "input_too_large"), OpenRouter ("maximum context length is"),
//     Ollama and the llama.cpp server ("exceeds the available context
//     size", "exceeds the context length") and LM Studio. The status does
//     not matter here: llama.cpp has answered with 500, and some servers
//     put the error inside a successful (streamed) response.
//   - An empty body counts as an overflow for 413 (Payload Too Large), and
//     for 400 only from Cerebras, which is known to answer an oversized
//     prompt that way.
//
// Errors that are no ProviderError, such as those of other SDKs that keep
// only the provider's message, are matched by their text (err.Error())
// with the same phrases and exclusions; no status is known for them.
//
// Requests whose input plus requested output exceed the window (Anthropic
// "input length and `max_tokens` exceed context limit", vLLM "'max_tokens'
// ... is too large ... maximum context length is") count as overflows:
// a shorter history makes them fit. Errors about the output limit alone
// (OpenAI "max_tokens is too large ... supports at most N completion
// tokens", Anthropic "maximum allowed number of output tokens") do not,
// since compaction cannot change them; nor does Anthropic's
// request_too_large, which is about the request's size in bytes. Note that
// an OpenAI-style message cannot be told apart when the requested output
// alone fills the window: it is reported as an overflow, and the caller
// should lower its output reservation.
//
// Some servers do not fail at all but accept or truncate an oversized
// prompt; see IsSilentOverflow.
func IsContextOverflow(err error) bool {
	if err == nil {
		return false
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe != nil && providerErrorOverflows(pe)
	}
	return overflowText(err.Error())
}

// providerErrorOverflows applies IsContextOverflow's rules to a provider's
// error response.
func providerErrorOverflows(pe *ProviderError) bool {
	if pe.StatusCode == 429 {
		return false
	}
	body := strings.TrimSpace(pe.Body)
	if body == "" {
		switch pe.StatusCode {
		case 413:
			return true
		case 400:
			return strings.EqualFold(pe.Provider, "cerebras")
		}
		return false
	}
	return overflowText(body)
}

// overflowText reports whether an error text, an error body or a message,
// describes a context overflow: it names none of the throttling markers
// and contains one of the overflow phrases. Both lists are lower case and
// live in this function so that nothing outside can change them.
func overflowText(s string) bool {
	notOverflow := [...]string{
		"rate limit",     // OpenAI "Rate limit reached ... (TPM)"
		"rate_limit",     // OpenAI, Groq rate_limit_exceeded; Anthropic rate_limit_error
		"per minute",     // Anthropic, Groq, Cerebras per-minute allowances
		"tokens per min", // OpenAI "tokens per min (TPM)"
		"quota",          // Gemini RESOURCE_EXHAUSTED, Cerebras request_quota_exceeded
		"overloaded",     // Anthropic overloaded_error
		"too many requests",
	}
	overflow := [...]string{
		"prompt is too long",                           // Anthropic
		"exceed context limit",                         // Anthropic: input plus max_tokens
		"exceeds model context window",                 // Anthropic 413
		"exceeds the context window",                   // OpenAI Responses API
		"context_length_exceeded",                      // OpenAI, Groq error code
		"maximum context length is",                    // OpenAI, DeepSeek, vLLM, OpenRouter
		"input tokens exceed the configured limit",     // OpenAI GPT-5
		"exceeds the maximum number of tokens allowed", // Google Gemini
		"maximum prompt length is",                     // xAI
		"input_too_large",                              // xAI, newer wording
		"reduce the length of the messages",            // Groq, Cerebras
		"too large for model with",                     // Mistral
		"exceeds the available context size",           // llama.cpp server, Ollama
		"exceed_context_size_error",                    // llama.cpp server error type
		"exceeds the context length",                   // Ollama with truncation off
		"greater than the context length",              // LM Studio
		"with a larger context length",                 // LM Studio ("Try to load the model with ...")
		"does not fit in context length",               // LM Studio 0.4
		"cannot truncate prompt with n_keep",           // LM Studio
		"context size has been exceeded",               // LM Studio, MLX engine
	}
	t := strings.ToLower(s)
	for _, m := range notOverflow {
		if strings.Contains(t, m) {
			return false
		}
	}
	for _, p := range overflow {
		if strings.Contains(t, p) {
			return true
		}
	}
	return false
}

// OverflowWindow returns the context window that a provider's overflow
// error states, 0 when body is not such an error or states none. Only the
// providers' own error shapes count, never a phrase found somewhere in the
// text: an error message may quote the request (text anyone can write),
// and a number read from there would let one request shrink the window of
// every other.
//
// body is a JSON error response, or the error object alone (as a
// Responses stream's response.failed event carries it). The number is
// read from the message's fixed opening, and only when the fixed fields
// say the error is an overflow:
//
//   - Anthropic, error type invalid_request_error: a message that opens
//     with "prompt is too long: 208432 tokens > 200000 maximum" gives
//     200000.
//   - OpenAI, error code context_length_exceeded: a message that opens
//     with "This model's maximum context length is 128000 tokens" or
//     "Input tokens exceed the configured limit of 272000 tokens" gives
//     that number.
//
// Anything else gives 0, including the overflow errors that name no
// window (the Responses API's "Your input exceeds the context window of
// this model").
func OverflowWindow(body string) int {
	type errorObject struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	var doc struct {
		errorObject
		Error *errorObject `json:"error"`
	}
	if json.Unmarshal([]byte(body), &doc) != nil {
		return 0
	}
	e := doc.errorObject
	if doc.Error != nil {
		e = *doc.Error
	}
	if e.Type == "invalid_request_error" {
		// Anthropic: "prompt is too long: N tokens > M maximum".
		if rest, ok := strings.CutPrefix(e.Message, "prompt is too long: "); ok {
			if _, rest, ok := cutCount(rest, " tokens > "); ok {
				if m, _, ok := cutCount(rest, " maximum"); ok {
					return m
				}
			}
		}
	}
	if bytes.Equal(e.Code, []byte(`"context_length_exceeded"`)) {
		for _, lead := range [...]string{"This model's maximum context length is ", "Input tokens exceed the configured limit of "} {
			if rest, ok := strings.CutPrefix(e.Message, lead); ok {
				if n, _, ok := cutCount(rest, " tokens"); ok {
					return n
				}
			}
		}
	}
	return 0
}

// cutCount reads the token count that opens s, digits with optional
// commas between groups of three ("272,000"), followed by suffix. It
// returns the count and what follows suffix; ok is false when s does not
// open that way or the count is zero or does not fit an int.
func cutCount(s, suffix string) (n int, rest string, ok bool) {
	i := 0
	var digits []byte
	for i < len(s) {
		c := s[i]
		if c >= '0' && c <= '9' {
			digits = append(digits, c)
			i++
			continue
		}
		if c == ',' && len(digits) > 0 && i+4 <= len(s) && isDigits(s[i+1:i+4]) {
			i++
			continue
		}
		break
	}
	rest, ok = strings.CutPrefix(s[i:], suffix)
	if !ok || len(digits) == 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(string(digits))
	if err != nil || n <= 0 {
		return 0, "", false
	}
	return n, rest, true
}

// isDigits reports whether s is all ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// IsSilentOverflow reports whether a response that did not fail used more
// input than the model's context window holds: the input tokens the
// provider reported, cache reads and cache writes included, exceed
// m.ContextWindow. Some providers (z.ai, for one) accept such a request
// and answer from a prompt they have cut; the answer is then unreliable
// and the history should be compacted as after an overflow error. An
// unknown window (zero or less) gives false.
//
// A server that truncates the prompt and reports the truncated count, as
// Ollama does by default, stays within the window and cannot be detected
// this way.
func IsSilentOverflow(u Usage, m ModelInfo) bool {
	if m.ContextWindow <= 0 {
		return false
	}
	return u.Input+u.CacheRead+u.CacheWrite > m.ContextWindow
}

// PlausibleUsage reports whether a provider's usage report could be true
// for model m: no count is negative, and none of the prompt (input, cache
// reads and cache writes together) or the output is more than twice the
// model's input limit (its context window when it has none). A report
// over the window but under twice it is plausible: it is what
// IsSilentOverflow looks for. With no window known only negative counts
// are refused.
//
// An implausible report comes from a broken or hostile upstream; used to
// measure the conversation it would force a compaction nothing needs, so
// it should be ignored.
func PlausibleUsage(u Usage, m ModelInfo) bool {
	counts := [...]int{u.Input, u.CacheRead, u.CacheWrite, u.Output}
	for _, n := range counts {
		if n < 0 {
			return false
		}
	}
	limit := m.UsableInput()
	if limit <= 0 {
		limit = m.InputLimit // a model known only by its input limit
	}
	if limit <= 0 {
		return true
	}
	bound := 2 * limit
	for _, n := range counts {
		if n > bound {
			return false
		}
	}
	return u.Input+u.CacheRead+u.CacheWrite <= bound
}
