// Package cline reads the task histories of Cline and of its forks Roo Code
// and Kilo Code into a compact.Transcript, so that compact can inspect,
// report on and import them like pi sessions. The format name is "cline".
//
// A task is a directory (…/globalStorage/<extension>/tasks/<task id>/)
// holding api_conversation_history.json, the conversation as the model
// was sent it, and ui_messages.json, what the extension showed. The facts
// below were read from the upstream sources: cline/cline
// src/core/task/index.ts, src/core/task/message-state.ts,
// src/core/task/tools/utils/ToolResultUtils.ts,
// src/core/context/context-management/ContextManager.ts,
// src/shared/ExtensionMessage.ts and src/shared/messages/ (before the
// 2026 move to apps/vscode), src/core/Cline.ts of early 2025 for the XML
// tool protocol; RooCodeInc/Roo-Code src/core/task-persistence/apiMessages.ts,
// src/core/condense/index.ts, src/core/context-management/index.ts,
// src/core/task/Task.ts and packages/types/src/message.ts.
//
// # Format
//
// api_conversation_history.json is one JSON array (written with
// JSON.stringify, usually on one line) of Anthropic-style messages {role,
// content}: content is a string or blocks (text, image with a base64
// source, tool_use {id, name, input}, tool_result {tool_use_id, content,
// is_error}, thinking {thinking, signature}, redacted_thinking, and Roo's
// reasoning and thoughtSignature blocks). Newer versions add ts (Unix ms),
// modelInfo {modelId, providerId, mode} and metrics {tokens {prompt,
// completion, cached}, cost} (prompt includes cached) to messages and
// call_id to blocks. Roo Code adds isSummary/condenseId (a condensation
// summary), condenseParent (a message that summary replaced),
// isTruncationMarker/truncationId (a sliding-window marker) and
// truncationParent (a message the marker hid).
//
// Before native tool calls, Cline and Roo used an XML protocol: the
// assistant writes <read_file><path>a.go</path></read_file> in its text,
// and the next user message opens each tool's output with a text block
// "[read_file for 'a.go'] Result:" (newer versions put the output in the
// same block after a newline), followed by the output blocks and, last,
// an <environment_details> block.
//
// ui_messages.json is an array of {ts, type "say"|"ask", say/ask, text,
// conversationHistoryIndex, conversationHistoryDeletedRange, modelInfo}.
// A say "api_req_started" holds as its text the JSON {request, tokensIn,
// tokensOut, cacheWrites, cacheReads, cost, cancelReason}; it is said
// before its request's user message is appended, so its
// conversationHistoryIndex k names the message before that user message and
// the answer is api message k+2. conversationHistoryDeletedRange [start,
// end] (inclusive indices into the api history, start always 2) is the
// range Cline cut from the model's context when it ran out of room: it
// keeps the first user/assistant pair and everything after end. Every ui
// message records the range in force when it was added.
//
// # Mapping
//
// Content blocks are mapped by the one mapping of the Messages API,
// anthropic.Part and anthropic.ToolResult, which the proxy and the
// request-body and Claude Code readers use as well (see the anthropic
// package for every block: a thinking signature in the thinkingSignature
// extra, redacted_thinking as a thinking part "[Reasoning redacted]"
// marked redacted, a tool_use input that is not an object wrapped as
// {"input": <value>}, an image by URL as an image part without data,
// documents and server tool blocks as text parts keeping the block in
// their "anthropicBlock" extra). Roo Code's own blocks are not
// Anthropic's: its reasoning becomes a thinking part holding its text,
// its thoughtSignature is kept as stored (see below). Each native
// tool_result becomes a tool result message after the assistant message
// holding its call. For the XML protocol the reader pairs each "[tool …] Result:"
// header with a synthesized call in the assistant message just before it:
// the matching <tool> XML is cut from that message's text and becomes a
// tool call whose Arguments are its parameters (a JSON object of strings)
// and whose Part.Extra["clineXml"] keeps the XML as written; when the text
// holds no such XML the call has empty arguments and
// Extra["clineSynthesized"]; a header that follows a native tool_use of
// its tool without a tool_result answers that call, and a second header
// for a use already answered in the same message (Roo Code writes an error
// and then the output under two) continues that result rather than making
// up a second call. Uses of Cline's tools that no header answers become
// calls as well: Cline runs one tool a message and answers a further use
// with "Tool [name] was not executed…", which becomes that call's result
// (an error); a use in the last response of a history has no result yet
// (a use cut off by "[Response interrupted by user]" ends before that
// notice, which stays text); elsewhere the call stays unanswered (Roo
// Code resumed the task after it). The result message holds the output blocks
// that follow the header up to the next header or the environment details,
// with the header in Extra["clineHeader"]. Results are therefore never
// orphaned; a header with no assistant message before it, and a native
// tool_result whose tool_use the history does not hold (a condensation
// removed it), become harness notes of kind orphan_result (see
// compact.OrphanResult), after the message's results, and a warning.
// The rest of a user message (its text and images)
// becomes one user message after its results, except the extension's own
// blocks: the <environment_details> appended to every user message and
// Cline's "# TODO LIST RECOMMENDED" reminder become RoleCustom messages
// whose CustomType is "harness:cline:environment_details" or
// "harness:cline:todo_reminder" (see compact.IsHarnessNote), in the order
// written, so that summaries never take them for the user's words. The
// "[TASK RESUMPTION] …" preamble of a resumed task (in newer Roo Code
// only "New instructions for task continuation:") becomes a
// "harness:cline:task_resumption" note, and the user's words after it,
// inside <user_message> tags, a user message of their own without the
// tags; so do the preambles before the user's feedback ("The user
// provided the following feedback:", "Feedback on the result:"), as
// "harness:cline:feedback" notes, the words inside <feedback>.
//
// Usage: metrics on the message win (Input = prompt - cached, CacheRead =
// cached, Output = completion). Otherwise api_req_started messages are
// attached by their conversationHistoryIndex (k+2) when the file has it,
// else by time when every assistant message and request has one (an
// assistant message takes the last request said since the assistant
// message before it, which also holds after Roo Code overwrote the
// history with a condensed one), else by order when the number of
// requests with usage equals the number of assistant messages; Input =
// tokensIn, Output = tokensOut, CacheRead = cacheReads, CacheWrite =
// cacheWrites (Cline's tokensIn excludes the cache; Roo Code,
// recognizable by apiProtocol, includes it since late 2025, and the cache
// is then subtracted when tokensIn is at least the cache counts). Some of
// Cline's OpenAI-compatible providers also report an inclusive tokensIn,
// which this package cannot tell apart. Requests that cannot be mapped
// stay KindCustom entries "cline:api_req_started" (the ui message as
// stored, id "ui<i>" for ui message i) at the end. Stop reasons: toolUse
// when the message calls tools, aborted for "[Response interrupted by
// user]" or a cancelReason of user_cancelled, error for "[Response
// interrupted by API Error]" or streaming_failed, stop otherwise.
//
// Compactions: each new conversationHistoryDeletedRange becomes a
// KindCompaction entry placed after the api message named by the
// conversationHistoryIndex of the first ui message carrying it, with
// FirstKeptID the first entry of api message end+1 and TokensBefore the
// whole context of the last request measured before it. pi keeps only
// what follows FirstKeptID, so the summary repeats the text of the
// messages Cline keeps at the start, after the context argument of a
// summarize_task or condense call when Cline's auto-condense produced the
// range. Roo's isSummary message becomes a compaction whose summary is its
// text and whose FirstKeptID is the next message (Roo's fresh start); a
// truncation marker becomes a compaction whose summary is the marker text
// and the first message Roo keeps. Roo's condense_context and
// sliding_window_truncation ui messages give TokensBefore and TokensAfter.
//
// Entries get deterministic ids: "m<i>" for the first entry made from api
// message i, "m<i>.<k>" for the next ones, "m<i>.range<s>-<e>" for a
// deleted range. Fields a Message does not model (ts, modelInfo, metrics,
// condenseParent, …) stay in Message.Extra under their names; unmodelled
// block fields in Part.Extra; Roo's thoughtSignature blocks in
// Extra["unknownBlocks"]. Those, and the blocks the Anthropic mapping
// keeps as text parts, are counted in Transcript.Unknown as
// "block:<type>". An extra named like a field of a pi message or part
// (in any case), or like an extra this package sets (unknownBlocks,
// clineHeader), is kept as "cline.<name>" (jsonrec.SafeExtras).
// Elements that are not user or assistant messages become KindCustom
// entries "cline:<role or type>" (unknown roles are counted too). The
// working directory comes from the environment details, the session id
// from the task directory's name.
//
// ui_messages.json only adds to the history, so a malformed ui record is
// a warning, not an error; a malformed api history element is an error
// naming the file, line and field. An array cut short after whole
// messages (a write that did not finish) is read with a warning.
//
// The standard library's encoding/json decodes both files; keeping values
// as json.RawMessage is what lets the reader pass them on unchanged.
package cline
