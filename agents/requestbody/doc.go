// Package requestbody reads one chat API request body, the JSON object a
// coding agent POSTs to its model, as a compact.Transcript. A captured
// request is the whole context the agent sent at that moment, so it is the
// simplest way to bring any agent's conversation to compact: log one body
// (a proxy, mitmproxy, the agent's debug output) and import it.
//
// The format name is "request-body" (Format). Two shapes are read, told
// apart by their fields (Shape): OpenAI Chat Completions and Anthropic
// Messages.
//
// # Format facts relied on
//
// From OpenAI's Chat Completions API reference (a Chat message is mapped
// by openai.ReadChatMessage, the mapping the proxy measures with, so both
// doors see the same messages):
//   - "messages" holds {role, content}; role is system, developer, user,
//     assistant, tool, or the legacy function. content is a string, null,
//     or an array of parts: {type:"text", text}, {type:"image_url",
//     image_url:{url, detail}} where url may be a data: URL
//     ("data:image/png;base64,..."), {type:"input_audio"}, {type:"file"},
//     {type:"refusal", refusal}.
//   - An assistant message carries tool_calls [{id, type:"function",
//     function:{name, arguments}}] where arguments is a string holding
//     JSON, and may carry a refusal (its text); OpenAI-compatible servers
//     add reasoning_content (DeepSeek, vLLM) or reasoning (OpenRouter)
//     for the model's reasoning text.
//   - A tool message answers one call by tool_call_id.
//   - Other top-level fields (tools, tool_choice, stream, temperature,
//     max_tokens, ...) configure the call.
//
// From Anthropic's Messages API reference and proxy/codec_anthropic.go:
//   - The system prompt is the top-level "system" (a string or text
//     blocks); "messages" holds {role: user|assistant, content} with
//     content a string or blocks: text, image {source:{type:"base64",
//     media_type, data}}, tool_use {id, name, input}, tool_result
//     {tool_use_id, content (string or blocks), is_error}, thinking
//     {thinking, signature}, redacted_thinking {data}, document, and
//     server-side blocks.
//   - Claude Code puts its session id in metadata.user_id, either as
//     "..._session_<uuid>" or as a JSON object string with session_id.
//
// # Mapping
//
// Every message becomes one entry in order. The system prompt (Anthropic's
// top-level system, or each Chat system/developer message, wherever it
// stands) becomes a custom entry "request-body:system" holding it as
// stored: it is kept, but it is not a turn of the conversation and does
// not reach the model as a user message after import. All other top-level
// fields (model, tools, parameters) become one custom entry
// "request-body:request", a JSON object holding them in file order.
//
// A refusal becomes a text part holding it. Tool calls become toolCall
// parts (Chat arguments are decoded from their
// string; arguments that are not a JSON object are wrapped as
// {"_raw": "<as sent>"} with a warning; a custom tool's input becomes
// {"input": "..."}, its type the part's callType extra), tool outputs
// toolResult messages named after their call. Anthropic messages are
// mapped by the one mapping of that API, anthropic.Content, which the
// proxy and the Claude Code reader use as well (see the anthropic package
// for every block): a user message's tool_result blocks each become a
// toolResult message and the runs of its other blocks user messages, in
// order; a tool_use input that is not an object is wrapped as
// {"input": <value>}; a thinking signature goes to the part's
// thinkingSignature extra and a redacted_thinking block becomes a thinking
// part "[Reasoning redacted]" marked redacted, as pi stores them; images
// become image parts (by URL too, the source in Extra); a block the
// mapping does not model (a document, a search result, a server tool
// block) becomes a text part with its readable text, the block as sent in
// its "anthropicBlock" extra, counted in Transcript.Unknown under
// "<type> block". The <system-reminder> blocks Claude
// Code writes into a user's text are cut out of it as RoleCustom messages
// of type "harness:request-body:system_reminder" (see
// compact.SplitReminders), so that summaries never quote them as the
// user's words. A result whose call is not in the body becomes a harness
// note of kind orphan_result (see compact.OrphanResult), the call id in
// its "tool_call_id" or "tool_use_id" extra, and a warning. Chat
// reasoning becomes thinking parts and images image parts (by URL too,
// the image_url in Extra, as for Anthropic); a Chat part the transcript
// cannot model (audio, a file) becomes a text part "[<type>]" whose
// "requestPart" extra holds the part
// as sent, counted in Transcript.Unknown under "<type> block". A
// message of a role the reader does not know becomes a custom entry
// "request-body:<role>" and is counted in Unknown.
//
// A request carries no usage and no stop reasons: assistant messages get
// StopReason toolUse when they hold calls and stop otherwise, and no
// Usage. Model is the body's model; entries carry no ids or timestamps
// (the body has none), so session.EncodeTranscript assigns them.
//
// Values kept as raw JSON (custom entry data, extras, tool arguments) lose
// the line breaks of a pretty-printed body (jsonrec.OneLine), because a pi
// session is JSON Lines; the values themselves are unchanged.
// An extra named like a field of a pi message or part (in any case) is
// kept as "request-body.<name>" (jsonrec.SafeExtras).
//
// The standard library's encoding/json is enough here: a body is one
// object read once, and its json.Decoder gives the byte offsets used for
// the line numbers in errors.
package requestbody
