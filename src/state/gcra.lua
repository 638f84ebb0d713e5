-- One call of a caller against each of its budgets (KEYS), all of them or none: the GCRA of
-- ferry's `mcp::limit`, with this server's clock, so that every replica reads one time.
--
-- ARGV[1] is "1" to spend the call, "0" to only measure it; then, for each key in turn, the
-- interval one call spends and the period (the most a budget can be spent ahead), both in
-- microseconds. A key holds "TAT INTERVAL": the theoretical arrival time, in microseconds
-- of this server's clock, and the interval it was last spent at (a reload that changes a
-- rate scales the time held ahead by the new interval over the old). A key expires when its
-- budget is full again, which is what a key never seen means.
--
-- Returns {0, 0} when the call fits (and was spent, when asked), else {N, WAIT}: the
-- 1-based position of the budget that frees last, and the microseconds until the call fits.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local refused, wait = 0, 0
local next_tats = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2 * i])
  local period = tonumber(ARGV[2 * i + 1])
  local tat = now
  local held = redis.call('GET', key)
  if held then
    local at, spent_at = string.match(held, '^(%d+) (%d+)$')
    at, spent_at = tonumber(at), tonumber(spent_at)
    if at and spent_at and at > now then
      if spent_at ~= interval and spent_at > 0 then
        at = now + math.floor((at - now) * interval / spent_at)
      end
      tat = at
    end
  end
  local next_tat = tat + interval
  local late = next_tat - (now + period)
  if late > wait then
    refused, wait = i, late
  end
  next_tats[i] = next_tat
end
if refused > 0 then
  return {refused, wait}
end
if ARGV[1] == '1' then
  for i, key in ipairs(KEYS) do
    local ttl = math.ceil((next_tats[i] - now) / 1000)
    redis.call('SET', key, string.format('%.0f', next_tats[i]) .. ' ' .. ARGV[2 * i], 'PX', ttl)
  end
end
return {0, 0}
