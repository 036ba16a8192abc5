package fakeupstream

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// writeError writes an error in the API's own shape: Anthropic's
// {"type":"error","error":{...},"request_id":...}, OpenAI's
// {"error":{"message","type","param","code"}}.
func writeError(w http.ResponseWriter, api API, status int, typ, code, msg string) {
	writeErrorParam(w, api, status, typ, code, "", msg)
}

func writeErrorParam(w http.ResponseWriter, api API, status int, typ, code, param, msg string) {
	if api == Anthropic {
		w.Header().Set("Request-Id", "req_fake")
		writeJSON(w, status, ordered{
			{"type", "error"},
			{"error", ordered{{"type", typ}, {"message", msg}}},
			{"request_id", "req_fake"},
		})
		return
	}
	w.Header().Set("X-Request-Id", "req_fake")
	var p, c any
	if param != "" {
		p = param
	}
	if code != "" {
		c = code
	}
	writeJSON(w, status, ordered{{"error", ordered{{"message", msg}, {"type", typ}, {"param", p}, {"code", c}}}})
}

// overflowMessage is the text each provider puts in its overflow error.
func overflowMessage(api API, tokens, window int) string {
	switch api {
	case Anthropic:
		return fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, window)
	case Chat:
		return fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", window, tokens)
	}
	return "Your input exceeds the context window of this model. Please adjust your input and try again."
}

// overflow writes the API's HTTP 400 for a request over the window.
func (f *Fake) overflow(w http.ResponseWriter, api API, tokens int) {
	WriteOverflow(w, api, tokens, f.cfg.Window)
}

// WriteOverflow writes the provider's real refusal of a request of tokens
// tokens to a model whose window is window: an HTTP 400 in api's error
// shape with its overflow message (Anthropic's "prompt is too long",
// OpenAI's context_length_exceeded). A Fake refuses a request over its
// Config.Window with it; a test server that decides for itself which
// requests overflow uses it to refuse them as a provider does.
func WriteOverflow(w http.ResponseWriter, api API, tokens, window int) {
	msg := overflowMessage(api, tokens, window)
	switch api {
	case Anthropic:
		writeError(w, api, http.StatusBadRequest, "invalid_request_error", "", msg)
	case Chat:
		writeErrorParam(w, api, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "messages", msg)
	default:
		writeErrorParam(w, api, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "input", msg)
	}
}
