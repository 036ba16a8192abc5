// Package sweagent reads SWE-agent trajectories (*.traj) as a
// compact.Transcript, so that a SWE-agent run can be measured, compacted
// and replayed like a pi session. The format name is "swe-agent"
// (Format).
//
// # Format facts relied on
//
// From SWE-agent's sweagent/types.py (HistoryItem, TrajectoryStep,
// AgentInfo), sweagent/agent/agents.py (DefaultAgent.add_step_to_history,
// _add_templated_messages_to_history, get_trajectory_data, RetryAgent
// .get_trajectory_data) and sweagent/agent/models.py (InstanceStats), at
// commit 3ea751c of github.com/SWE-agent/SWE-agent, and from the
// trajectories in its tests/test_data and trajectories/demonstrations:
//
//   - A .traj file is one JSON object (written with indent=2):
//     "trajectory" (the steps), "history" (the messages the model was
//     sent), "info" (the run's result), "replay_config" (the run's
//     configuration, an object or a JSON string), "environment" (a
//     name). Demonstration files hold "history" only. A RetryAgent file
//     adds "attempts", one such object per attempt, and copies the chosen
//     attempt's fields to the top level.
//   - A history item is {role: system|user|assistant|tool, content (a
//     string, or a list of parts {type:"text", text} and {type:
//     "image_url", image_url:{url}}), agent, message_type: system_prompt,
//     demonstration, observation, action, ...}, with is_demo on the
//     demonstration's items, thought and action on assistant items, tags
//     and cache_control added by history processors.
//   - With function calling, assistant items carry tool_calls [{id, type:
//     "function", function:{name, arguments (a JSON string)}}] and
//     thinking_blocks [{type:"thinking", thinking, signature}], and each
//     observation is role "tool" with tool_call_ids (one id). Without it
//     (the older thought/action layout), the assistant's content is its
//     whole answer (thought and the command in a code block) and each
//     observation is a role "user" item.
//   - A trajectory step is {action, observation, response, thought,
//     execution_time, state (an object, or in older files a JSON string,
//     with working_dir and open_file), query (the messages sent for that
//     step), extra_info}.
//   - info holds model_stats {instance_cost, tokens_sent,
//     tokens_received, api_calls} (sums over the run), exit_status,
//     submission, edited_files30/50/70, and version fields.
//
// # Mapping
//
// The conversation is built from "history", because that is what the
// model saw. The system prompt becomes a custom entry "swe-agent:system"
// (kept, but not a user turn). User items become user messages, assistant
// items assistant messages (thinking blocks as thinking parts, the content
// as text, tool_calls as toolCall parts), tool items toolResult messages
// of the call their tool_call_ids name (a tool item whose call the history
// does not hold becomes a harness note of kind orphan_result, see
// compact.OrphanResult, and a warning). In the older layout there are no
// calls: the assistant's answer stays text, with its command inside, and
// each observation is the user message that followed it, exactly as the
// model saw it; no tool result is made up. The fields the transcript does
// not model (agent, message_type, thought, action, is_demo, tags,
// cache_control) stay in Message.Extra under their own names.
//
// Every other top-level member becomes a custom entry "swe-agent:<key>"
// holding it as stored: environment, replay_config and attempts before
// the messages, then trajectory and info after them. The usage figures in
// info are sums over the whole run, not the usage of one call, so no
// message carries Usage. Transcript.Model is the replay configuration's
// agent.model.name (also set on the assistant messages that are not part
// of a demonstration), Cwd the working_dir of the first trajectory step.
// SWE-agent stores no compaction: its history processors elide old
// observations only in the copy sent to the model (each step's query),
// never in history.
//
// The file gives its records no ids, so each entry's id is derived from
// the member or history item it was read from, its place and its bytes
// (jsonrec.IDs): eight hex digits, the same every time the file is read.
//
// Values kept as raw JSON lose the line breaks of the indented file
// (jsonrec.OneLine), because a pi session is JSON Lines; the values
// themselves are unchanged.
// An extra named like a field of a pi message or part (in any case) is
// kept as "swe-agent.<name>" (jsonrec.SafeExtras).
//
// Unknown roles and unknown top-level members become custom entries
// "swe-agent:<role>" or "swe-agent:<key>" and are counted in
// Transcript.Unknown; a content part other than text or a base64 image
// becomes a text part "[<type>]" holding the part under its "part" extra,
// counted as "<type> part". The standard library's encoding/json reads
// the file: its json.Decoder gives the byte offsets behind the line
// numbers of errors.
package sweagent
