package redact

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	const key = "canary-Qm4xT9<pz>&w"
	for _, tc := range []struct {
		name    string
		in      string
		secrets []string
		want    string
	}{
		{"configured key", "bad key canary-Qm4xT9<pz>&w given", []string{key}, "bad key REDACTED given"},
		{"configured key, JSON-escaped", `{"key":"canary-Qm4xT9\u003cpz\u003e\u0026w"}`, []string{key}, `{"key":"REDACTED"}`},
		{"configured key, JSON without HTML escaping", `{"k":"canary-Qm4xT9<pz>&w"}`, []string{key}, `{"k":"REDACTED"}`},
		{"short configured key left alone", "the key k is wrong", []string{"k"}, "the key k is wrong"},
		{"empty secret ignored", "nothing here", []string{""}, "nothing here"},
		{"bearer", "Authorization: Bearer abc.def-123 rejected", nil, "Authorization: Bearer REDACTED rejected"},
		{"bearer in Go's header JSON", `{"Authorization":["Bearer tok123"]}`, nil, `{"Authorization":["Bearer REDACTED"]}`},
		{"authorization without scheme", `"Authorization":["rawtoken99"]`, nil, `"Authorization":["REDACTED"]`},
		{"basic", "authorization: Basic dXNlcjpwYXNz", nil, "authorization: Basic REDACTED"},
		{"x-api-key header", "x-api-key: hunter2hunter2", nil, "x-api-key: REDACTED"},
		{"x-api-key in Go's header JSON", `{"X-Api-Key":["abc123456"]}`, nil, `{"X-Api-Key":["REDACTED"]}`},
		{"x-api-key escaped inside a JSON string", `{"message":"{\"X-Api-Key\":[\"abc123456\"]}"}`, nil, `{"message":"{\"X-Api-Key\":[\"REDACTED\"]}"}`},
		{"api_key query", "GET /v1?api_key=zzz999&x=1", nil, "GET /v1?api_key=REDACTED&x=1"},
		{"sk key", "Incorrect API key provided: sk-proj-AbCdEf1234567890.", nil, "Incorrect API key provided: REDACTED."},
		{"sk-ant key", `"sk-ant-api03-xyz_XYZ-0123456789"`, nil, `"REDACTED"`},
		{"sk inside a word left alone", "disk-1234567890 and task-abcdefghij", nil, "disk-1234567890 and task-abcdefghij"},
		{"short sk left alone", "sk-1", nil, "sk-1"},
		{"own messages left alone", "no API key: set OPENAI_API_KEY (or the config's apiKey), or point --base-url at a server that needs none",
			nil, "no API key: set OPENAI_API_KEY (or the config's apiKey), or point --base-url at a server that needs none"},
		{"basic as a word left alone", "basic information missing", nil, "basic information missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := String(tc.in, tc.secrets...)
			if got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if again := String(got, tc.secrets...); again != got {
				t.Errorf("not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestRedactError(t *testing.T) {
	if Error(nil, "secret-value") != nil {
		t.Fatal("Error(nil) is not nil")
	}
	plain := errors.New("nothing secret")
	if Error(plain, "secret-value") != plain {
		t.Error("an error without a secret was replaced")
	}
	pe := &statusError{code: 401, body: "key secret-value refused"}
	err := Error(pe, "secret-value")
	if strings.Contains(err.Error(), "secret-value") || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("text %q", err)
	}
	var got *statusError
	if !errors.As(err, &got) || got != pe {
		t.Error("the redacted error does not wrap the original")
	}
}

// statusError is an error type of a caller's, to be found through the
// redacted error with errors.As.
type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }
