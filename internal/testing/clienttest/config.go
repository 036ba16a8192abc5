package clienttest

import "testing"

// Rejects checks that newClient refuses each configuration of cases (by
// name) with an error, as each client's New must refuse a configuration
// it cannot send with.
func Rejects[C, T any](t *testing.T, newClient func(C) (T, error), cases map[string]C) {
	t.Helper()
	for name, cfg := range cases {
		t.Run(name, func(t *testing.T) {
			if c, err := newClient(cfg); err == nil {
				t.Errorf("New(%+v) = %+v, want an error", cfg, c)
			}
		})
	}
}

// Env names a client's environment variables for FromEnv: the one that
// holds its key, the one that holds its base URL, and the other
// provider's key, which it must not read.
type Env struct {
	Key, BaseURL, OtherKey string
}

// FromEnv checks a client's ConfigFromEnv, given as read (the key, base
// URL and model of the configuration it returns): the key and the base
// URL come from the client's own variables, nothing comes from the other
// provider's, and the model is never set from the environment.
func FromEnv(t *testing.T, vars Env, read func(getenv func(string) string) (key, baseURL, model string)) {
	t.Helper()
	tests := []struct {
		name         string
		env          map[string]string
		key, baseURL string
	}{
		{"empty environment", nil, "", ""},
		{"key only", map[string]string{vars.Key: "sk-1"}, "sk-1", ""},
		{"key and base URL", map[string]string{vars.Key: "sk-2", vars.BaseURL: "http://gateway:8080/v1", vars.OtherKey: "no"}, "sk-2", "http://gateway:8080/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, base, model := read(func(k string) string { return tt.env[k] })
			if key != tt.key || base != tt.baseURL || model != "" {
				t.Errorf("ConfigFromEnv = key %q, base URL %q, model %q; want %q, %q, none", key, base, model, tt.key, tt.baseURL)
			}
		})
	}
}
