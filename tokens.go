package compact

import (
	"encoding/json"

	"github.com/compactkit/compact/internal/jsontext"
)

// ImageTokens is the estimate for one image, wherever it appears.
const ImageTokens = 1200

// imageChars is ImageTokens expressed in characters, so that an image adds
// to a message's character count before the division by four.
const imageChars = ImageTokens * 4

// EstimateTokens estimates a message's tokens as ceil(chars / 4), counting
// characters as UTF-16 code units, the way pi does, so that plans match
// pi's on the same file:
//
//   - user, custom and tool results: their text parts, plus 4800 chars
//     (1200 tokens) per image;
//   - assistant: text, thinking, and for each tool call its name plus its
//     arguments as JavaScript's JSON.stringify writes them;
//   - bash executions: command plus output;
//   - summaries: the summary text.
//
// The estimate ignores the system prompt and tool schemas. It is cheap and
// deliberately simple; providers' reported usage corrects it (see Measure).
func EstimateTokens(m *Message) int {
	return (messageChars(m) + 3) / 4
}

// JSStringifyLen returns the length in UTF-16 code units of
// JSON.stringify(JSON.parse(raw)) in JavaScript: compact, keys in their
// stored order, no escaping of HTML or non-ASCII characters. Empty input
// counts as "null"; input that does not parse counts its raw length.
//
// It is the length the estimate gives a tool call's arguments, which pi
// measures this way; the counting itself is done by internal/jsontext.
func JSStringifyLen(raw json.RawMessage) int {
	return jsontext.StringifyLen(raw)
}
