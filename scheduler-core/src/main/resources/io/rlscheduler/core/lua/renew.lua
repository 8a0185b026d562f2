-- renew.lua: the heartbeats of workers that hold no task, the ones a lab of idle machines sends
-- thousands of a second. Bare: loaded without lib.lua (whose prelude costs more than the renewal
-- itself), so it keys and writes as lib.lua's beat() does, and it must stay in step with it.
-- One call carries one or more renewals (LeaseCore coalesces concurrent ones), each decided on its
-- own exactly as if it came alone, in order.
-- Renews each worker's liveness lease: its deadline in the liveness set, and its field in the
-- beats hash ("<session>|<ms>"), where the session is checked; the worker record is not touched.
-- A worker without a beat (a record older than the beats hash) or that still has reservations
-- is answered FULL: heartbeat.lua answers it, writes its beat, and repairs its reservations
-- (it drops those no task backs).
-- KEYS: [1] {ns}:workers  [2] {ns}:liveness
-- ARGV: [1] liveness lease ms, then 2 per renewal: worker id, session id
-- Returns a JSON array, one answer per renewal in order, each as heartbeat.lua answers:
--   {r="OK", renewed=0, revoked=[], cancel=[], deadline=ms},
--   or {r="WRONG_SESSION", session=current} / {r="FULL"}
redis.replicate_commands()
local K_WORKERS, K_LIVENESS = KEYS[1], KEYS[2]
local K_BEATS = K_WORKERS .. ':beat'
local K_RES = K_WORKERS .. ':res:'
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now_text = string.format('%d', now_ms)
local deadline = string.format('%d', now_ms + tonumber(ARGV[1]))
local ok = '{"r":"OK","renewed":0,"revoked":[],"cancel":[],"deadline":' .. deadline .. '}'
local n = (#ARGV - 1) / 2
local ids = {}
for i = 1, n do ids[i] = ARGV[2 * i] end
local beats = redis.call('HMGET', K_BEATS, unpack(ids))
local out = {}
-- The writes of every renewed worker go in one ZADD and one HSET; a worker renewed twice in one
-- run is written twice, the same values.
local zadd, hset = {'ZADD', K_LIVENESS}, {'HSET', K_BEATS}
for i = 1, n do
  local id, session = ids[i], ARGV[2 * i + 1]
  local last = beats[i]
  if not last then
    out[i] = '{"r":"FULL"}'
  else
    local registered = string.match(last, '^(.*)|%d+$')
    if registered ~= session then
      out[i] = cjson.encode({r = 'WRONG_SESSION', session = registered})
    elseif redis.call('EXISTS', K_RES .. id) == 1 then
      out[i] = '{"r":"FULL"}'
    else
      zadd[#zadd + 1] = deadline
      zadd[#zadd + 1] = id
      hset[#hset + 1] = id
      hset[#hset + 1] = session .. '|' .. now_text
      out[i] = ok
    end
  end
end
if #zadd > 2 then
  redis.call(unpack(zadd))
  redis.call(unpack(hset))
end
return '[' .. table.concat(out, ',') .. ']'
