-- wrk script for bench/soak.sh: MCP 2026-07-28 `tools/call`s in a fixed mix, each thread
-- stopping by itself after SOAK_CALLS_PER_THREAD answers. Of every ten calls, seven read a
-- pet (200 from the upstream), one reads a missing pet (404: an isError result), one has an
-- argument of the wrong type (refused before the upstream) and one names no tool (a JSON-RPC
-- error); every hundredth call asks for `Connection: close`, so connections come and go.
-- Each thread appends a line to SOAK_DONE_FILE when it is done. Prints one line after the run:
--   RESULT calls=N seconds=S rps=R ok=A tool_errors=B rpc_errors=C socket_errors=D
local quota = tonumber(os.getenv("SOAK_CALLS_PER_THREAD") or "")
local done_file = os.getenv("SOAK_DONE_FILE")
if quota == nil or done_file == nil then
   error("SOAK_CALLS_PER_THREAD and SOAK_DONE_FILE are not set")
end

local function call(name, arguments, close)
   local headers = {
      ["Content-Type"] = "application/json",
      ["Accept"] = "application/json, text/event-stream",
      ["MCP-Protocol-Version"] = "2026-07-28",
      ["Mcp-Method"] = "tools/call",
      ["Mcp-Name"] = name,
   }
   if close then
      headers["Connection"] = "close"
   end
   local body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. name .. '",'
      .. '"arguments":' .. arguments .. ',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
      .. '"io.modelcontextprotocol/clientCapabilities":{},'
      .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"4"}}}}'
   return wrk.format("POST", "/mcp", headers, body)
end

local requests = {}
local next_request = 0
answers, ok, tool_errors, rpc_errors = 0, 0, 0, 0

function init(args)
   for index = 0, 99 do
      local close = index == 99
      local kind = index % 10
      if kind == 7 then
         requests[index] = call("getPet", '{"petId":2}', close)
      elseif kind == 8 then
         requests[index] = call("getPet", '{"petId":"one"}', close)
      elseif kind == 9 then
         requests[index] = call("noSuchTool", '{}', close)
      else
         requests[index] = call("getPet", '{"petId":1}', close)
      end
   end
end

function request()
   local r = requests[next_request]
   next_request = (next_request + 1) % 100
   return r
end

function response(status, headers, body)
   answers = answers + 1
   if status == 200 and body:find('"isError":true', 1, true) then
      tool_errors = tool_errors + 1
   elseif status == 200 and body:find('"structuredContent":{"id":1', 1, true) then
      ok = ok + 1
   else
      rpc_errors = rpc_errors + 1
   end
   if answers == quota then
      -- wrk itself runs until its deadline: the script ends it once every thread is done.
      local file = io.open(done_file, "a")
      file:write("done\n")
      file:close()
      wrk.thread:stop()
   end
end

local threads = {}

function setup(thread)
   table.insert(threads, thread)
end

function done(summary, latency, requests)
   local counts = { ok = 0, tool_errors = 0, rpc_errors = 0 }
   for _, thread in ipairs(threads) do
      for name, _ in pairs(counts) do
         counts[name] = counts[name] + thread:get(name)
      end
   end
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "RESULT calls=%d seconds=%.1f rps=%.0f ok=%d tool_errors=%d rpc_errors=%d socket_errors=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      counts.ok, counts.tool_errors, counts.rpc_errors,
      e.connect + e.read + e.write + e.timeout))
end
