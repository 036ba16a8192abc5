// Package agents finds which agent wrote a session file and reads it with
// that agent's reader: pi's own sessions (package session), and the
// formats of other agents, each read by its own package into a
// compact.Transcript (Claude Code, Codex, Cline and its forks, Gemini CLI,
// OpenHands, SWE-agent, and plain chat API request bodies).
//
// Detection reads the start of the file only (HeadSize bytes) and asks
// each format in turn; pi sessions are recognised first, by their
// "session" header line. A folder is offered to the formats that spread
// a conversation over several files (a Cline task folder, an OpenHands
// events folder).
//
// # The files of a reader
//
// Every reader below agents/ is laid out in the same files, so that what
// is learnt in one tells where to look in the others:
//
//   - doc.go: the package comment. Which agent writes the files and
//     where, the facts of the format the reader relies on and where they
//     were taken from, and how each kind of record becomes entries.
//   - detect.go: Detect(head []byte) bool, which judges the first
//     HeadSize bytes of a file, possibly cut anywhere, without reading
//     the rest. Also DetectDir for a format spread over a folder, and the
//     detectors of files the format names but that are not read on their
//     own (Cline's ui_messages.json, Gemini CLI's stream-json output).
//   - read.go: Format, the format's name, and the entry points:
//     Read(data, name), which reads a whole file held in memory and names
//     name in its errors and warnings, and ReadFile(path).
//   - records.go: the records as the agent writes them (lines, array
//     elements, events, content blocks) and their decoding. A record
//     that cannot be decoded is an error, or a warning where the reader
//     keeps it as stored, of one line naming the file, the line and the
//     field.
//   - build.go: the builder that turns the records into the
//     transcript's entries and messages.
//   - compaction.go: the agent's own compaction markers as
//     compact.KindCompaction entries, for the agents that write any
//     (Claude Code, Codex, Cline and Roo Code, Gemini CLI, OpenHands).
//
// A job only one format has gets a file of its own named for it:
// claudecode's branch.go (the tree of uuids), codex's events.go (the
// event_msg lines), cline's usage.go (the usage the ui messages record)
// and xmltool.go (the XML tool protocol), geminicli's checkpoint.go (the
// /chat save files), openhands's output.go (the output.jsonl of an
// evaluation).
//
// Where a format embeds an API's own messages, one file hands them to
// that API's package, which holds the one mapping of its wire format onto
// compact messages: claudecode's messages.go and cline's records.go
// (Anthropic messages, package anthropic), codex's items.go (Responses
// items, package openai), and requestbody's anthropic.go and chat.go,
// which are that reader's build (a request body has no records of its own
// beyond the API's messages). Every reader ends with jsonrec.SafeExtras,
// so that an extra named like a field of a pi message or part is kept
// under the reader's prefix ("cline.<name>", "claudeCode.<name>") rather
// than read back as that field.
//
// # Adding a reader
//
// Write the package in that shape, add its Format to Formats at its
// place in detection order (the most specific first, the plain request
// body last) and its folder to readers in this package's tests, which
// then read every file of its testdata on each run and check its files
// against this list. Test it with internal/testing/readertest:
// CheckDetect with FileHeads and Heads for detection, DetectsNone with
// the other formats' files, CheckError or RunBad for bad input, RunCases or
// CheckRoles, CheckCustoms, CheckUnknown, CheckWarnings, CheckCalls and
// CheckPairing for what a file becomes, Import, RoundTrip or SameSession
// for the way through a pi session file, CheckOrphanResult for a tool
// result without its call, SameCounts for counts taken from the file
// without the reader, FuzzRead or FuzzDetectRead and BenchRead.
package agents
