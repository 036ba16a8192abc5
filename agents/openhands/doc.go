// Package openhands reads OpenHands event streams as a compact.Transcript:
// the trajectory a conversation exports (one JSON array of events) and the
// event store of a session on disk (sessions/<id>/events/<n>.json, one
// event per file). The format name is "openhands" (Format). Detect
// recognises a file by its start, DetectDir a session or events folder;
// ReadFile reads either, and reads the whole folder when given one of its
// event files.
//
// # Format facts relied on
//
// From All-Hands-AI/OpenHands at commit 156d068 (the V0 event model):
// openhands/events/serialization/event.py (event_to_dict), action.py and
// observation.py, openhands/events/action/*.py and observation/*.py,
// openhands/events/tool.py (ToolCallMetadata), openhands/core/schema
// (the action and observation type names), openhands/memory/view.py and
// conversation_memory.py (how events become the model's messages),
// openhands/llm/metrics.py (TokenUsage) and openhands/storage/locations.py
// (the event files' paths); and from the trajectories in its
// tests/runtime/trajs:
//
//   - An event is {id, timestamp (ISO 8601, usually without a zone),
//     source: user|agent|environment, message, cause (the id of the event
//     it answers), tool_call_metadata, llm_metrics} plus either
//     {action, args, timeout} or {observation, content, extras, success}.
//   - tool_call_metadata is {function_name, tool_call_id, model_response,
//     total_calls_in_response}; model_response is the LiteLLM response
//     that produced the action: {id, model, choices[0].message {content,
//     tool_calls [{id, function{name, arguments}}], reasoning_content},
//     choices[0].finish_reason, usage {prompt_tokens, completion_tokens,
//     total_tokens, prompt_tokens_details.cached_tokens,
//     cache_read_input_tokens, cache_creation_input_tokens}}. Every action
//     of one response carries the same model_response; its observation
//     carries the same tool_call_metadata.
//   - OpenHands builds the model's messages from the events: the actions
//     of one response become one assistant message holding the response's
//     text and all its tool calls; an observation with tool_call_metadata
//     becomes the tool message of its call; a user message action a user
//     message; an agent message action an assistant message; an
//     observation without tool_call_metadata (the result of something the
//     user did) a user message.
//   - A condensation action {forgotten_event_ids | forgotten_events_start_id
//     .. forgotten_events_end_id, summary, summary_offset} removes those
//     events from what the model sees and inserts the summary at
//     summary_offset; an AgentCondensationObservation (observation
//     "condense") carries such a summary as content.
//
// # Mapping
//
// Entries take the event ids as their ids, and the event timestamps
// (read as UTC when they name no zone) as theirs. Agent actions with
// tool_call_metadata become assistant messages with toolCall parts, one
// message per model_response id (its text, reasoning as a thinking part,
// every call of the response; usage from model_response.usage with Input
// the prompt tokens minus the cached and cache-written ones; StopReason
// from finish_reason; Model from model_response.model), holding the action
// events as stored in its "openhandsEvents" extra. Observations with
// tool_call_metadata become toolResult messages (IsError for an error
// observation or success false) holding the event, less its content, in
// "openhandsEvent"; one whose call the stream does not hold (cut by a
// condensation, or lost) becomes a harness note of kind orphan_result (see
// compact.OrphanResult) and a warning. A call the stream never answers (the finish call that
// ends a run) stays an unanswered call. User message actions become user
// messages, agent ones assistant messages; a command the user ran becomes a
// bashExecution message with the output and exit code of its observation;
// other observations without tool_call_metadata become user messages, as
// OpenHands shows them to the model. Images given as data: URLs become
// image parts, other URLs text parts "[image: URL]".
//
// A condensation becomes a KindCompaction entry (Summary, FirstKeptID the
// first entry after the last forgotten event, TokensBefore the context of
// the last call before it, Details source "openhands" with the forgotten
// ids and summary_offset). pi's compaction keeps only what follows
// FirstKeptID, so the events OpenHands keeps before the forgotten ones
// (its first user message, say) are summarized in the imported session.
// A "condense" observation is a compaction of everything before it.
//
// The system prompt action and the events that never reach the model
// (agent state changes, null observations, recalls, condensation
// requests, ...) become custom entries "openhands:<action or observation
// type>" holding the event as stored; types the reader does not know are
// also counted in Transcript.Unknown. Raw values lose the line breaks of
// an indented file (jsonrec.OneLine), because a pi session is JSON Lines.
// An extra named like a field of a pi message or part (in any case) is
// kept as "openhands.<name>" (jsonrec.SafeExtras).
//
// # Evaluation and resolver output
//
// An evaluation run (evaluation/utils/shared.py, EvalOutput) or a resolver
// run (openhands/resolver/resolver_output.py, ResolverOutput) writes
// output.jsonl, one instance a line: {instance_id, test_result,
// instruction, metadata, history, metrics, error, instance} or {issue,
// issue_type, instruction, base_commit, git_patch, history, metrics,
// success, ...}. history is the instance's event stream (older files hold
// [action, observation] pairs, read as the events in order). ReadOutput
// and ReadFileInstance read one instance, named by its instance_id or the
// issue's number; its other members become a first custom entry
// "openhands:instance", with what looks like a credential redacted.
//
// The V1 events of the OpenHands agent SDK (kind: "ActionEvent", ...)
// are another format and are not read.
package openhands
