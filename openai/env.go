package openai

// ConfigFromEnv returns a Config whose APIKey comes from OPENAI_API_KEY and
// whose BaseURL comes from OPENAI_BASE_URL (DefaultBaseURL when unset).
// The variables are read through getenv, usually os.Getenv; passing
// another function keeps tests and embedding programs away from the
// process environment. The other fields keep their zero values.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		BaseURL: getenv("OPENAI_BASE_URL"),
		APIKey:  getenv("OPENAI_API_KEY"),
	}
}
