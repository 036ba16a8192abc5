package jsonrec

import "time"

// Stamp writes t as pi writes an entry's timestamp: RFC 3339 in UTC with
// milliseconds ("2026-01-02T03:04:05.678Z"). Millis reads it back.
func Stamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
