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
	} else {
		w.Header().Set("X-Request-Id", "req_fake")
	}
	writeJSON(w, status, errorObject(api, typ, code, param, msg))
}

// errorObject is an error body in the API's own shape (see writeError);
// an empty code or param is written as null.
func errorObject(api API, typ, code, param, msg string) ordered {
	if api == Anthropic {
		return ordered{
			{"type", "error"},
			{"error", ordered{{"type", typ}, {"message", msg}}},
			{"request_id", "req_fake"},
		}
	}
	var p, c any
	if param != "" {
		p = param
	}
	if code != "" {
		c = code
	}
	return ordered{{"error", ordered{{"message", msg}, {"type", typ}, {"param", p}, {"code", c}}}}
}

// ErrorBody is an error body in api's own shape: Anthropic's
// {"type":"error","error":{"type","message"},"request_id"}, OpenAI's
// {"error":{"message","type","param","code"}} (param null, code null when
// empty). A test server that fails a request as a provider does sends it
// with the status it chooses.
func ErrorBody(api API, typ, code, msg string) string {
	out, _ := json.Marshal(errorObject(api, typ, code, "", msg))
	return string(out)
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
// tokens to a model whose window is window: an HTTP 400 whose body is
// OverflowBody. A Fake refuses a request over its Config.Window with it; a
// test server that decides for itself which requests overflow uses it to
// refuse them as a provider does.
func WriteOverflow(w http.ResponseWriter, api API, tokens, window int) {
	typ, code, param := overflowFields(api)
	writeErrorParam(w, api, http.StatusBadRequest, typ, code, param, overflowMessage(api, tokens, window))
}

// OverflowBody is the body of the provider's real overflow error (see
// WriteOverflow): Anthropic's invalid_request_error "prompt is too long:
// N tokens > W maximum", OpenAI's context_length_exceeded.
func OverflowBody(api API, tokens, window int) string {
	typ, code, param := overflowFields(api)
	out, _ := json.Marshal(errorObject(api, typ, code, param, overflowMessage(api, tokens, window)))
	return string(out)
}

// overflowFields are the type, code and param of each API's overflow
// error.
func overflowFields(api API) (typ, code, param string) {
	switch api {
	case Anthropic:
		return "invalid_request_error", "", ""
	case Chat:
		return "invalid_request_error", "context_length_exceeded", "messages"
	}
	return "invalid_request_error", "context_length_exceeded", "input"
}
