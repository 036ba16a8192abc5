package compact

// Transcript is a conversation read from another agent's own file format
// (a Claude Code transcript, a Codex rollout, a Cline task, ...), mapped
// onto this package's entries so that the engine, the reports and the
// benchmarks read it like a pi session.
//
// A reader fills Entries in file order. Tool calls are PartToolCall parts
// of assistant messages and their outputs RoleToolResult messages whose
// ToolCallID names the call; usage goes on the assistant message of the
// call it measured; an agent's own compaction becomes a KindCompaction
// entry whose FirstKeptID is the first entry kept after it. What a
// message does not model stays in Message.Extra (and Part.Extra), and a
// record that is no message becomes a KindCustom entry whose CustomType
// names the record type and whose Data is the record as stored, so that
// nothing of the file is lost on import.
type Transcript struct {
	// Format names the reader ("claude-code", "codex", ...).
	Format string
	// SessionID is the agent's own id of the conversation, "" if none.
	SessionID string
	// Cwd is the working directory the agent ran in, "" if unknown.
	Cwd string
	// Timestamp is the time of the conversation's start (RFC 3339), ""
	// if unknown.
	Timestamp string
	// Model is the model the agent named first, "" if none, and Provider
	// its provider ("anthropic", "openai", ...), "" if unknown. A session
	// made from the transcript starts with a model_change entry naming
	// them, so that the model's window is known; assistant messages name
	// their own model as they go.
	Model    string
	Provider string
	// ContextWindow is the context window, in tokens, that the agent
	// itself recorded for the model it ran last (Codex writes
	// model_context_window into its rollouts), 0 when the file records
	// none. It is the window the agent worked with, so it outranks the
	// registry's window for the model.
	ContextWindow int
	// Entries are the conversation's entries in file order. IDs are
	// unique and non-empty; ParentID links each to the one before it on
	// its branch ("" for the root).
	Entries []*Entry
	// Unknown counts the records of types the reader does not know, by
	// type; they are kept as custom entries too.
	Unknown map[string]int
	// Warnings are problems the reader worked around (a record it could
	// not read, a result without its call), each naming where.
	Warnings []string
}
