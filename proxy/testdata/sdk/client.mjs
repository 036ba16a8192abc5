// client.mjs drives the official provider SDKs (npm "openai" and
// "@anthropic-ai/sdk") through a tool loop against a base URL, the way a
// small coding agent would: it sends the whole history every turn, runs the
// shell call the model asked for (simulated: it prints the call's STEP-n
// marker and a few kilobytes of numbers), appends the result and asks again.
//
// proxy/sdk_test.go starts it in front of the compact proxy. It prints one
// JSON line per turn with what the SDK parsed from the response, so the
// test can compare it with what the upstream answered.
//
// Environment:
//   COMPACT_SDK_BASE          base URL without /v1 (required)
//   COMPACT_SDK_TURNS         turns per conversation (default 12)
//   COMPACT_SDK_MODES         comma-separated subset of the modes below (default all)
//   COMPACT_SDK_RESULT_BYTES  size of each tool result (default 6000)
//   COMPACT_SDK_MODULES       node_modules folder holding the SDKs
//                             (default: node_modules beside this script)
//
// Output lines:
//   {"versions": {...}}                        once, first
//   {"mode", "turn", "ok": true, ...}          one per turn
//   {"mode", "turn", "ok": false, "error"...}  a turn the SDK failed; the
//                                              conversation stops there
// The exit status is 1 when any turn failed, 2 on a usage error.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const modulesDir = path.resolve(process.env.COMPACT_SDK_MODULES || path.join(here, 'node_modules'));
const base = process.env.COMPACT_SDK_BASE;
if (!base) {
  console.error('client.mjs: COMPACT_SDK_BASE is not set (want http://host:port, without /v1)');
  process.exit(2);
}
const turns = Number(process.env.COMPACT_SDK_TURNS || 12);
const resultBytes = Number(process.env.COMPACT_SDK_RESULT_BYTES || 6000);
if (!Number.isInteger(turns) || turns < 1 || !Number.isInteger(resultBytes) || resultBytes < 16) {
  console.error('client.mjs: COMPACT_SDK_TURNS and COMPACT_SDK_RESULT_BYTES must be positive integers');
  process.exit(2);
}

// The SDKs are loaded from modulesDir, wherever it is, through require:
// both packages ship CommonJS builds next to their ES modules.
const require = createRequire(import.meta.url);
const load = (name) => require(require.resolve(name, { paths: [path.dirname(modulesDir)] }));
const version = (name) => JSON.parse(readFileSync(path.join(modulesDir, name, 'package.json'), 'utf8')).version;
const { default: Anthropic } = load('@anthropic-ai/sdk');
const { default: OpenAI } = load('openai');

const anthropic = new Anthropic({ apiKey: 'sk-ant-sdk-test', baseURL: base, maxRetries: 0, timeout: 60_000 });
const openai = new OpenAI({ apiKey: 'sk-sdk-test', baseURL: base + '/v1', maxRetries: 0, timeout: 60_000 });

const model = 'fake-model';
const description = 'Run a shell command and return its output.';
const schema = {
  type: 'object',
  properties: { command: { type: 'string', description: 'The command line.' } },
  required: ['command'],
};

// runShell stands in for running the command: it echoes the STEP-n marker
// the command prints and fills the rest with numbers, resultBytes in all.
function runShell(args) {
  const command = String(args?.command ?? args?.cmd ?? '');
  const step = /STEP-(\d+)/.exec(command);
  let out = step ? `STEP-${step[1]}\n` : `no step in ${JSON.stringify(command)}\n`;
  for (let i = 1; out.length < resultBytes; i++) out += `${i}\n`;
  return out.slice(0, resultBytes);
}

// parseArgs reads a tool call's JSON arguments; bad JSON is a failed turn.
function parseArgs(raw) {
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new Error(`tool call arguments are not JSON: ${err.message}: ${raw}`);
  }
}

// Each mode is one conversation: start() returns its first request's
// history, turn(history) makes one call and returns what the SDK parsed,
// with next(output) appending the assistant turn and the tool result.

function anthropicMode(stream) {
  return {
    api: 'anthropic',
    stream,
    start: (mode) => [{ role: 'user', content: `Conversation ${mode}: run the numbered shell steps, one at a time.` }],
    count: (messages) => messages.length,
    async turn(mode, messages) {
      const params = {
        model,
        max_tokens: 1024,
        system: `You are a careful shell agent (${mode}).`,
        tools: [{ name: 'bash', description, input_schema: schema }],
        messages,
      };
      const msg = stream ? await anthropic.messages.stream(params).finalMessage() : await anthropic.messages.create(params);
      const call = msg.content.find((b) => b.type === 'tool_use');
      const text = msg.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
      return {
        id: msg.id,
        stop: msg.stop_reason,
        tool_call_id: call?.id ?? '',
        tool_name: call?.name ?? '',
        tool_args: call ? JSON.stringify(call.input) : '',
        text,
        usage: { input: msg.usage.input_tokens, output: msg.usage.output_tokens },
        usage_raw: msg.usage,
        next: call
          ? () => {
              messages.push({ role: 'assistant', content: msg.content });
              messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: runShell(call.input) }] });
            }
          : null,
      };
    },
  };
}

function chatMode(stream) {
  return {
    api: 'chat',
    stream,
    start: (mode) => [
      { role: 'system', content: `You are a careful shell agent (${mode}).` },
      { role: 'user', content: `Conversation ${mode}: run the numbered shell steps, one at a time.` },
    ],
    count: (messages) => messages.length,
    async turn(mode, messages) {
      const params = {
        model,
        tools: [{ type: 'function', function: { name: 'bash', description, parameters: schema } }],
        messages,
      };
      const completion = stream
        ? await openai.chat.completions.stream({ ...params, stream_options: { include_usage: true } }).finalChatCompletion()
        : await openai.chat.completions.create(params);
      const choice = completion.choices[0];
      const call = choice.message.tool_calls?.[0];
      const usage = completion.usage;
      return {
        id: completion.id,
        stop: choice.finish_reason,
        tool_call_id: call?.id ?? '',
        tool_name: call?.function.name ?? '',
        tool_args: call?.function.arguments ?? '',
        text: choice.message.content ?? '',
        usage: usage ? { input: usage.prompt_tokens, output: usage.completion_tokens, total: usage.total_tokens } : null,
        usage_raw: usage ?? null,
        next: call
          ? () => {
              const args = parseArgs(call.function.arguments);
              messages.push({
                role: 'assistant',
                content: choice.message.content ?? null,
                tool_calls: choice.message.tool_calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.function.name, arguments: c.function.arguments },
                })),
              });
              messages.push({ role: 'tool', tool_call_id: call.id, content: runShell(args) });
            }
          : null,
      };
    },
  };
}

function responsesMode(stream) {
  return {
    api: 'responses',
    stream,
    start: (mode) => [
      { role: 'developer', content: `You are a careful shell agent (${mode}).` },
      { role: 'user', content: `Conversation ${mode}: run the numbered shell steps, one at a time.` },
    ],
    count: (input) => input.length,
    async turn(mode, input) {
      const params = {
        model,
        store: false,
        tools: [{ type: 'function', name: 'bash', description, parameters: schema, strict: false }],
        input,
      };
      const resp = stream ? await openai.responses.stream(params).finalResponse() : await openai.responses.create(params);
      const call = resp.output.find((item) => item.type === 'function_call');
      const usage = resp.usage;
      return {
        id: resp.id,
        stop: resp.status,
        tool_call_id: call?.call_id ?? '',
        tool_name: call?.name ?? '',
        tool_args: call?.arguments ?? '',
        text: resp.output_text ?? '',
        usage: usage ? { input: usage.input_tokens, output: usage.output_tokens, total: usage.total_tokens } : null,
        usage_raw: usage ?? null,
        next: call
          ? () => {
              const args = parseArgs(call.arguments);
              for (const item of resp.output) {
                if (item.type === 'function_call') {
                  input.push({ type: 'function_call', id: item.id, call_id: item.call_id, name: item.name, arguments: item.arguments, status: item.status });
                } else {
                  input.push(item);
                }
              }
              input.push({ type: 'function_call_output', call_id: call.call_id, output: runShell(args) });
            }
          : null,
      };
    },
  };
}

const modes = {
  'anthropic': anthropicMode(false),
  'anthropic-stream': anthropicMode(true),
  'chat': chatMode(false),
  'chat-stream': chatMode(true),
  'responses': responsesMode(false),
  'responses-stream': responsesMode(true),
};

const selected = (process.env.COMPACT_SDK_MODES || Object.keys(modes).join(',')).split(',').map((s) => s.trim()).filter(Boolean);
for (const name of selected) {
  if (!modes[name]) {
    console.error(`client.mjs: unknown mode ${JSON.stringify(name)} in COMPACT_SDK_MODES (known: ${Object.keys(modes).join(', ')})`);
    process.exit(2);
  }
}

const print = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
print({ versions: { 'openai': version('openai'), '@anthropic-ai/sdk': version('@anthropic-ai/sdk'), node: process.version } });

let failed = false;
for (const name of selected) {
  const mode = modes[name];
  const history = mode.start(name);
  for (let turn = 1; turn <= turns; turn++) {
    const sent = mode.count(history);
    let got;
    try {
      got = await mode.turn(name, history);
    } catch (err) {
      failed = true;
      print({ mode: name, api: mode.api, stream: mode.stream, turn, ok: false, sent_items: sent, error: String(err?.stack ?? err), status: err?.status ?? 0 });
      break;
    }
    const { next, ...parsed } = got;
    print({ mode: name, api: mode.api, stream: mode.stream, turn, ok: true, sent_items: sent, ...parsed });
    if (!next) break;
    try {
      next();
    } catch (err) {
      failed = true;
      print({ mode: name, api: mode.api, stream: mode.stream, turn, ok: false, sent_items: sent, error: String(err?.stack ?? err) });
      break;
    }
  }
}
process.exit(failed ? 1 : 0);
