// Package jsontext is the one byte-level JSON and UTF-16 toolkit of the
// module: it reads JSON as stored, without decoding it into values, and
// counts text the way JavaScript does.
//
//   - Scanning: SkipSpace, SkipString and SkipValue find where a value
//     ends; ObjectMembers, ArrayElements and Object give the byte spans of
//     an object's members and an array's elements, so that a caller can
//     splice a document from its own bytes (the proxy does); Find picks a
//     member by key; WithoutKey removes a key at any depth.
//   - Reading: TopLevelString and TopLevelValues answer "what is stored
//     under this key" in one pass; Unquote decodes a string literal's
//     inside as encoding/json would.
//   - Counting: UTF16Len and UTF16LenBytes give JavaScript's String.length
//     (UTF-16 code units), CutUTF16 cuts a text to a length in those
//     units, RuneOffset finds where the n-th character starts, and
//     StringifyLen the length of JSON.stringify(JSON.parse(raw)),
//     which is how pi counts a tool call's arguments.
//
// The standard decoder answers all of these too, but allocates for every
// token and is an order of magnitude slower on the large arguments of
// edits and writes and on the 30 MB request bodies the proxy reads. Runs
// of plain string bytes are tested eight bytes at a time (internal/swar).
//
// The session decoder (compact/session) keeps a scanner of its own, which
// validates and decodes in one pass and is about twice as fast for that
// job; it shares the byte tests of internal/swar with this package.
package jsontext
