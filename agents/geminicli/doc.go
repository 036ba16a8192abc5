// Package geminicli reads Gemini CLI's chat recordings and checkpoints
// into a compact.Transcript, so that compact can inspect, report on and
// import them like pi sessions. The format name is "gemini-cli".
//
// The facts below were read from google-gemini/gemini-cli:
// packages/core/src/services/chatRecordingService.ts and
// chatRecordingTypes.ts (the recording and its loader),
// packages/core/src/core/geminiChat.ts (what is recorded when),
// packages/core/src/context/chatCompressionService.ts and
// packages/core/src/core/client.ts (compression), and
// packages/core/src/core/logger.ts (checkpoints), at commit 5411f113 and
// at the commits that introduced each change noted below.
//
// # Recordings
//
// Recordings live in ~/.gemini/tmp/<project hash>/chats/. Until April 2026
// a recording was one JSON object rewritten on every change,
// session-<time>-<id>.json: {sessionId, projectHash, startTime,
// lastUpdated, messages, summary?, directories?, kind?}. Since then it is
// session-<time>-<id>.jsonl, appended to: a first line with the metadata,
// then one line per change: a MessageRecord (written again, whole, each
// time the message grows: its tokens, then its tool calls with their
// results), {"$set": {...}} merging metadata (lastUpdated after every
// message), {"$rewindTo": id} dropping the messages from id on (the /rewind
// command), and {"$set": {"messages": [...]}} replacing the whole list.
// Gemini CLI's loader keeps the last record of each id at the position of
// the first, and this package does the same. Subagent recordings
// (<parent id>/<id>.jsonl) have the same form.
//
// A MessageRecord is {id, timestamp, type, content, displayContent?}; type
// is user, gemini, info, error or warning. content is a PartListUnion (a
// string, a Part or an array of Parts: {text}, {text, thought: true},
// {inlineData}, {functionCall}, {functionResponse}, ...). A gemini record
// adds model, thoughts [{subject, description, timestamp}], tokens {input,
// output, cached, thoughts, tool, total} and toolCalls [{id, name, args,
// result, status, timestamp, displayName, description, resultDisplay,
// renderOutputAsMarkdown, agentId?}], where result is the
// functionResponse parts sent back to the model. tokens copies the API's
// usage metadata: input is promptTokenCount, which includes the cached
// part (cachedContentTokenCount); total is prompt + output + thoughts +
// tool-use prompt. Since May 2026 the tool responses sent to the model are
// also recorded as a user message of functionResponse parts.
//
// Chat compression: the JSON recordings of 2025 and early 2026 did not
// record it at all (the file kept every message; only the in-memory
// history was compressed; masking of tool outputs rewrote the results in
// place). Since the JSONL format, a compression restarts the chat and
// syncs its new history into the file as a $set of the message list: a
// new user message holding the <state_snapshot> summary, the model's
// acknowledgement, then the kept turns under their old ids.
//
// # Mapping
//
// A user record becomes a user message (text and image parts; the other
// parts stay in Extra["unknownParts"], counted in Transcript.Unknown as
// "part:<kind>"), except Gemini CLI's setup context ("This is the Gemini
// CLI. We are setting up the context for our chat.", or a
// <session_context> block), which becomes a RoleCustom message of type
// "harness:gemini-cli:session_context" (see compact.IsHarnessNote). A gemini record becomes an assistant message: each
// thought as a thinking part "**subject** description", the content, and
// each tool call as a PartToolCall (args as Arguments; its other fields in
// Part.Extra), followed by one tool result message per call made from the
// call's result: the output (or error) of its functionResponse as text,
// IsError for an error response or a status of error or cancelled. Usage
// (provider "google", the record's model): Input = input - cached + tool,
// CacheRead = cached, Output = output + thoughts, Total = total; the stored
// tokens stay in Extra["tokens"]. Stop reason toolUse when it calls tools,
// else stop. A user record of functionResponse parts whose calls already
// have their results becomes a KindCustom entry "gemini-cli:tool-response"
// (it repeats them); a response whose call is not known becomes a harness
// note of kind orphan_result (see compact.OrphanResult) and a warning. info, error and warning records, which are never sent to
// the model, become KindCustom entries "gemini-cli:<type>"; other types are
// kept the same way and counted as "type:<type>".
//
// The metadata, merged over all lines, becomes the first entry, a KindCustom
// "gemini-cli:session"; intermediate lastUpdated values are not kept. The
// recording does not store the working directory (projectHash is a hash of
// it); the first of its directories, when it lists them, is taken as Cwd. A
// rewind leaves the dropped messages in the file and makes the next message
// start a branch from the message before them (from the session entry when
// none is left). A $set of the message list that only changes contents is
// kept as a custom entry "gemini-cli:history-sync" (the stored messages are
// not changed); one that only drops the last messages (a rollback) is a
// branch like a rewind; any other is a compression: a KindCompaction entry
// whose summary is the text of the new messages before the first kept one,
// whose FirstKeptID is that message (or, if none is kept, the next entry),
// whose TokensBefore is the usage of the last assistant message before it
// and whose Details hold the new messages' records and the number dropped.
// Entry ids are the records' ids; tool results are "<id>#<n>"; an id
// written again after a rewind gets "~2"; the metadata entry is "session",
// a compaction "compression-<line>", another kept line "line-<line>".
// An extra named like a field of a pi message or part (in any case), or
// like an extra this package sets (unknownParts, response), is kept as
// "gemini-cli.<name>" (jsonrec.SafeExtras).
//
// A malformed line is an error naming the file and line; an incomplete
// last line (a crash mid-write) is a warning. A message record whose
// content cannot be mapped is kept as a custom entry "gemini-cli:invalid"
// with a warning, so that one bad record does not lose the rest.
//
// # Checkpoints
//
// /chat save writes checkpoint-<tag>.json in the project's temporary
// directory: {history: Content[], authType} (a bare Content[] in older
// versions), the API history {role: user|model, parts}. Model parts map
// like gemini content; functionCall parts become tool calls and the
// functionResponse parts of the next user content their results, paired by
// id, or by name in order for calls without one; a response that pairs
// with no call becomes an orphan_result note, as in a recording. Checkpoints carry no ids,
// times, model or usage; entries are "c<i>" for content i. A compression
// summary in a checkpoint is ordinary user text there.
//
// The standard library's encoding/json decodes the files; keeping values as
// json.RawMessage is what lets the reader pass them on unchanged.
package geminicli
