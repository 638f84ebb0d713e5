-- Spends a confirmation's nonce once, for every replica: one SET NX with its expiry.
--
-- KEYS[1] is the nonce's key, KEYS[2] the marker of when this server's memory began (set by
-- the first ferry to find it missing: at start, or after Redis lost its data in a restart
-- without persistence or a flush). ARGV[1] is when the state was sealed and ARGV[3] a
-- margin, both in seconds (the sealing replica's clock), ARGV[2] how long to keep the nonce,
-- in milliseconds.
--
-- Returns 1 when the nonce is spent now, 0 when it was already, and -1 when the state was
-- sealed before the marker: its nonce may have been spent and forgotten with the data, so
-- it cannot be accepted once-only.
local now = tonumber(redis.call('TIME')[1])
local began = tonumber(redis.call('GET', KEYS[2]))
if not began then
  began = now
  redis.call('SET', KEYS[2], began)
end
if tonumber(ARGV[1]) < began + tonumber(ARGV[3]) then
  return -1
end
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
