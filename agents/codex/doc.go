// Package codex reads OpenAI Codex CLI rollouts
// (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl) into a
// compact.Transcript, so that compact can inspect, report on and import
// them like pi sessions. The format name is "codex".
//
// # Format
//
// The facts below come from openai/codex: RolloutItem, RolloutLine,
// SessionMeta, TurnContextItem, CompactedItem and the token count events
// in codex-rs/protocol/src/protocol.rs, ResponseItem and its payloads in
// codex-rs/protocol/src/models.rs, the recorder in the rollout crate
// (codex-rs/core/src/rollout, later codex-rs/rollout), and the
// compacted history built in codex-rs/core/src/compact.rs; and from real
// rollouts (see testdata/SOURCE.md).
//
// Each line is {"timestamp", "type", "payload"} (newer writers add an
// "ordinal"):
//
//   - session_meta: id, timestamp, cwd, originator, cli_version,
//     instructions or base_instructions, source, model_provider, git.
//   - turn_context: the settings of a turn, among them model and cwd.
//   - response_item: what the model saw or said, by payload.type:
//     message (role user, developer or assistant; content items
//     input_text, input_image with a data URL, output_text), reasoning
//     (summary of summary_text items, optional content, encrypted_content),
//     function_call (name, arguments as a JSON string, call_id),
//     function_call_output (call_id, output: a string, content items, or
//     in older versions {content, success}), custom_tool_call (call_id,
//     name, input as raw text, e.g. apply_patch) and its
//     custom_tool_call_output, local_shell_call (call_id, action),
//     tool_search_call (call_id, arguments) and tool_search_output
//     (call_id, tools), web_search_call and image_generation_call (run by
//     the provider, no output), ghost_snapshot, compaction and
//     context_compaction (encrypted), agent_message and additional_tools
//     (newer multi-agent and tool-loading items).
//   - event_msg: events for the interface. token_count carries
//     info.last_token_usage {input_tokens, cached_input_tokens,
//     output_tokens, reasoning_output_tokens, total_tokens} for the
//     latest model call (input_tokens includes the cached ones), and
//     info.total_token_usage for the session.
//   - compacted: a compaction, its summary in message; newer versions
//     leave message empty and store the history that replaced the old one
//     in replacement_history (kept user messages, then the summary as the
//     last user message, or an encrypted compaction item when the server
//     compacted).
//
// Early rollouts (before the envelope) start with a bare {id, timestamp,
// instructions, git} object, then bare items ({"type": "message", ...})
// and {"record_type": "state"} lines; they are read the same way.
//
// # Mapping
//
// Each response item is mapped by openai.ReadResponsesItem, the mapping
// the proxy measures the Responses API with, so both doors see the same
// messages. The output items between two inputs (reasoning, assistant
// message, function, custom and local shell calls, and the calls the
// provider ran, such as web_search_call, as their JSON text) are one
// model response and become one assistant message (a tool search with a
// call_id counts as a call, its output as a tool result holding the
// tools' JSON as text): reasoning as PartThinking (the summary texts, or
// the content texts when there is no summary; encrypted_content and the
// raw summary and content in Part.Extra), text as PartText, calls as
// PartToolCall (function arguments that are a JSON object as stored, ""
// as {}, anything else as {"_raw": ...}; a custom tool's input as
// {"input": ...}). Its stop
// reason is toolUse when it calls tools, stop otherwise, aborted when a
// turn_aborted event comes before its usage. Inputs are user and developer
// messages, tool outputs and compactions. Tool outputs become tool result
// messages with the call's name; an output whose call is missing becomes
// a harness note of kind orphan_result (see compact.OrphanResult), with
// the call id in Extra["call_id"], and a warning.
//
// Usage comes from token_count: Input = input_tokens -
// cached_input_tokens, CacheRead = cached_input_tokens, Output =
// output_tokens, Total = total_tokens, the stored object in
// Extra["tokenUsage"]. Codex writes a token_count after the response
// it measures (newer versions) or just before its items, repeated after
// the tool output (0.4x versions); so a count goes to the open response,
// else to the last one when that has none yet, else to the next one, and
// a count equal to the last one applied is a repeat and ignored.
//
// Members of an item the message does not model go into Message.Extra,
// or Part.Extra for the parts of a response; the item's "id" as "itemId",
// a line's own members beside the envelope as "codex.<name>", and a name
// the session reader would take for one of its own fields (in any case)
// as "codex.<name>".
//
// Developer messages and the context Codex injects as user messages
// (<environment_context>, <user_instructions>, AGENTS.md instructions, ...)
// are harness notes (see compact.IsHarnessNote): RoleCustom messages whose
// CustomType is "harness:codex:<tag>" ("developer" for a developer
// message, spaces in the tag as "_"), which the model still sees as user
// text and summaries never quote as the user's request. They are also
// marked in Extra["codexRole"] ("developer") and Extra["codexInjected"]
// (the tag). A compacted record becomes a
// KindCompaction entry: Summary = message, or the text of the last message
// of replacement_history; TokensBefore = the total_tokens of the last
// token count before it (the context size Codex compacted); Details
// hold source "codex" and the replacement history. Everything else
// (session_meta, turn_context, event_msg, ghost snapshots, encrypted
// compaction items, agent messages, state lines) becomes a KindCustom
// entry "codex:<type>" holding the line
// as stored; unknown record and item types are counted in
// Transcript.Unknown too. Entries are linear, ParentID left empty, except
// after a thread_rolled_back event (the user undid the last num_turns
// prompts): the entry after it hangs from the entry before the first
// prompt undone, so the undone turns stay in the file but off the path.
// Lines of newer types (inter_agent_communication, world_state) are kept
// as custom entries.
//
// Transcript.SessionID, Cwd and Timestamp come from session_meta, Model is
// the first model a turn_context (or session_meta) names, Provider the
// session's model_provider ("openai", Codex's default, when none is
// named), ContextWindow the model_context_window of the last task_started
// or token_count event that records one (Codex's effective window for
// its model, such as 258,400 or 272,000 for GPT-5 models, below the
// registry's 400,000). A compaction's FirstKeptID is the entry after it.
//
// The rollout gives its lines no ids, so each entry's id is derived from
// the line it starts at, its number and its bytes (jsonrec.IDs): eight
// hex digits, the same every time the file is read.
//
// ReadFile reads plain .jsonl files; the zstd-compressed .jsonl.zst files
// newer versions write for old sessions must be decompressed first.
//
// The standard library's encoding/json decodes the lines: keeping stored
// values as json.RawMessage is what lets the reader pass them on unchanged.
package codex
