-- wrk script of the load benchmark (scripts/load.sh).
--
-- Each request is a streamed Anthropic Messages request of a coding
-- agent's conversation of about TOKENS tokens (4 bytes a token): a user
-- message, then tool calls and their outputs. Every wrk thread cycles
-- through CONVERSATIONS conversations of its own, each with its own
-- session id and first message, so the proxy keeps a record per
-- conversation as it would for real agents resending their history.
--
-- TARGETS (host:port,host:port,...) spreads the threads round-robin over
-- several addresses: thread i connects to TARGETS[i mod n]. Without it,
-- every thread uses the URL given to wrk.
--
-- done() prints one JSON line, prefixed "load-result ", that the script
-- reads: requests, seconds, errors and latency percentiles in µs.

local tokens = tonumber(os.getenv("TOKENS") or "20000")
local conversations = tonumber(os.getenv("CONVERSATIONS") or "16")

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  local targets = os.getenv("TARGETS")
  if targets and targets ~= "" then
    local list = {}
    for t in string.gmatch(targets, "[^,]+") do
      table.insert(list, t)
    end
    local hostport = list[((counter - 1) % #list) + 1]
    local host, port = string.match(hostport, "^(.+):(%d+)$")
    thread.addr = wrk.lookup(host, port)[1]
  end
  table.insert(threads, thread)
end

-- history builds the messages after the first one: tool call and result
-- pairs until the body is about the wanted size.
local function history()
  local output = string.rep("output line of a tool\\n", 200)
  local parts = {}
  local size = 0
  local i = 0
  while size < 4 * tokens - 2000 do
    local call = string.format('{"role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"cat f%d"}}]}', i, i)
    local result = string.format('{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"%s"}]}', i, output)
    table.insert(parts, call)
    table.insert(parts, result)
    size = size + #call + #result
    i = i + 1
  end
  return table.concat(parts, ",")
end

local requests = {}
local nextRequest = 0

function init(args)
  local rest = history()
  for c = 1, conversations do
    local id = string.format("load-%d-%d", tid, c)
    local body = '{"model":"claude-load","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"Conversation ' .. id .. ': go"},' .. rest .. ']}'
    local headers = {
      ["Content-Type"] = "application/json",
      ["X-Claude-Code-Session-Id"] = id,
      ["anthropic-version"] = "2023-06-01",
      -- the proxy compacts nothing for requests without a credential
      ["x-api-key"] = "sk-ant-load",
    }
    requests[c] = wrk.format("POST", "/v1/messages", headers, body)
  end
end

function request()
  nextRequest = (nextRequest % #requests) + 1
  return requests[nextRequest]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('load-result {"requests":%d,"seconds":%.3f,"errors":%d,"status_errors":%d,"timeouts":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.0f}\n',
    summary.requests, summary.duration / 1e6, e.connect + e.read + e.write + e.timeout, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
