// Package claudecode reads Claude Code project transcripts
// (~/.claude/projects/<project>/<session>.jsonl) into a compact.Transcript,
// so that compact can inspect, report on and import them like pi sessions.
// The format name is "claude-code".
//
// Anthropic publishes no schema for these files. The facts below were
// taken from real transcripts written by Claude Code 2.0.24 and 2.1.39
// (see testdata/SOURCE.md) and from the field names other public readers
// rely on; the API blocks inside message follow Anthropic's Messages API.
//
// # Format
//
// Each line is one JSON record with a "type". Conversation records (user,
// assistant, system, progress) carry a "uuid" and the "parentUuid" of the
// record before them, which makes the file a tree: editing an earlier
// prompt or retrying starts a new branch from an older record. Every
// record also repeats sessionId, cwd, version and gitBranch.
//
//   - assistant: one line per content block of an API response. The lines
//     of one response share message.id; each has its own uuid. The usage
//     and stop_reason of the last line are the final ones (they are
//     replaced, never added up). A response streamed while its tools run
//     can have tool results written between its lines.
//   - user: message.content is a string (a prompt) or an array of blocks.
//     Tool outputs are user records whose blocks are tool_result
//     (tool_use_id, is_error, content as a string or as text and image
//     blocks), with the tool's structured result in the record's
//     toolUseResult field. The results of parallel calls each point at
//     the line of their own call, so they are not all on the parent chain.
//     isMeta marks text Claude Code injected (command caveats, reminders).
//   - system with subtype compact_boundary and compactMetadata (trigger
//     "manual" or "auto", preTokens, sometimes postTokens) marks a
//     compaction; its parentUuid is null and logicalParentUuid names the
//     record before it. The next user record has isCompactSummary: true
//     and holds the summary as its text.
//   - isSidechain: true marks the conversation of a subagent. Older
//     versions wrote them into the main file; newer ones write
//     <session>/subagents/agent-*.jsonl files, whose records are all
//     sidechain records.
//   - summary (a title, with leafUuid), file-history-snapshot,
//     queue-operation, progress, custom-title and other records are not
//     messages.
//
// # Mapping
//
// Content blocks are mapped by the one mapping of the Messages API,
// anthropic.Content, which the proxy and the request-body reader use as
// well (see the anthropic package for every block: a thinking signature in
// the thinkingSignature extra, redacted_thinking as a thinking part
// "[Reasoning redacted]" marked redacted, a tool_use input that is not an
// object wrapped as {"input": <value>}, documents and server tool blocks
// as text parts keeping the block in their "anthropicBlock" extra). The
// lines of one response become one assistant message, with the last
// line's usage (Input =
// input_tokens, CacheRead = cache_read_input_tokens, CacheWrite =
// cache_creation_input_tokens, Output = output_tokens), provider
// "anthropic" and the model. The stop reasons end_turn, stop_sequence,
// pause_turn and refusal map to stop, max_tokens and model_context_window_exceeded to
// length, tool_use to toolUse; Claude Code mostly stores null, which maps
// to toolUse when the message calls tools and to stop otherwise. Records
// with isApiErrorMessage become assistant messages with stop reason error.
// Each tool_result block becomes its own tool result message after the
// assistant message holding its call; a result without an earlier call
// becomes a harness note of kind orphan_result (see compact.OrphanResult)
// and a warning.
//
// User text that Claude Code wrote itself is not the user's: a record
// marked isMeta (the caveat before a local command's output, an expanded
// command prompt, a reminder), the <command-name>/<command-message>
// wrappers of a slash command, its <local-command-stdout> or
// <local-command-stderr> output and the "[Request interrupted by user…]"
// notices become RoleCustom messages whose CustomType is
// "harness:claude-code:<kind>" (meta, caveat, command, command-output,
// interrupted; see compact.IsHarnessNote). A <system-reminder>…
// </system-reminder> block inside a user's text is cut out of it into a
// note of kind system_reminder, placed where it was written; the user's
// words around it stay a user message. The model still sees notes as
// user text; summaries never take them for a request.
//
// The record's own fields (uuid, parentUuid, isMeta, toolUseResult, cwd,
// ...) go into Message.Extra under their names (a name the session
// reader would take for one of its own fields, in any case, as
// "claudeCode.<name>"); the API message's other
// fields (id, stop_reason, usage as stored, ...) into Extra["apiMessage"];
// the uuid, parentUuid and timestamp of the further lines of a joined
// response into Extra["lines"]; unmodelled block fields into Part.Extra.
// The summary record of a compaction becomes a KindCompaction entry
// (TokensBefore = preTokens, TokensAfter = postTokens, Details with
// source "claude-code", trigger as recorded and reason: "threshold" for
// trigger "auto", "manual" for "manual"); its boundary record stays a
// custom entry before it. Every record that is not a message becomes a
// KindCustom entry "claude-code:<type>" holding the record as stored;
// sidechain records in a file that also holds the main conversation
// become "claude-code:sidechain" custom entries. Record types this
// package does not know are counted in Transcript.Unknown as well.
//
// # Branches
//
// The conversation kept is the main line: the parent chain of the last
// non-sidechain record, followed through compact boundaries by their
// logicalParentUuid (or, when an auto compaction never wrote that record,
// by the record before the boundary). Its entries are chained in file
// order, together with the results of parallel calls and the custom
// entries. Messages of abandoned branches are kept too, as entries whose
// ParentID is their own parent (or, when that is not in the file, the main
// line's entry before them), so they stay in the file but off the path. Only the first entry of a transcript can be a root:
// when an abandoned branch starts before the main line's first record (the
// first prompt was edited), that record's entry moves to the front. Entry ids are the records' uuids (a record split into
// several messages gives "<uuid>-2", ...); records without a uuid get
// "line-<N>".
//
// # Files
//
// Transcript.SessionID and Cwd are the first sessionId and cwd of the
// records, Model the first model an assistant record names (Provider
// "anthropic"), Timestamp the first record's.
//
// ReadFile reads one transcript file. It does not merge the subagent files
// of <session>/subagents/: they are separate conversations, and reading one
// of them on its own gives that subagent's conversation (a file whose
// records are all sidechain records is read as the conversation itself).
// SubagentFiles lists them for a caller that wants to import them too.
//
// The standard library's encoding/json decodes the records: the files are
// read once, record by record, and keeping stored values as
// json.RawMessage is what lets the reader pass them on unchanged.
package claudecode
