-- renew.lua: the heartbeat of a worker that holds no task, the one a lab of idle machines sends
-- thousands of a second. Bare: loaded without lib.lua (whose prelude costs more than the renewal
-- itself), so it keys and writes as lib.lua's beat() does, and it must stay in step with it.
-- Renews the worker's liveness lease: its deadline in the liveness set, and its field in the
-- beats hash ("<session>|<ms>"), where the session is checked; the worker record is not touched.
-- A worker without a beat (a record older than the beats hash) or that still has reservations
-- is answered FULL: heartbeat.lua answers it, writes its beat, and repairs its reservations
-- (it drops those no task backs).
-- KEYS: [1] {ns}:workers  [2] {ns}:liveness
-- ARGV: [1] worker id  [2] session id  [3] liveness lease ms
-- Returns JSON as heartbeat.lua: {r="OK", renewed=0, revoked=[], cancel=[], deadline=ms},
--   or {r="WRONG_SESSION", session=current} / {r="FULL"}
redis.replicate_commands()
local K_WORKERS, K_LIVENESS = KEYS[1], KEYS[2]
local K_BEATS = K_WORKERS .. ':beat'
local id, session = ARGV[1], ARGV[2]
local last = redis.call('HGET', K_BEATS, id)
if not last then return '{"r":"FULL"}' end
local registered = string.match(last, '^(.*)|%d+$')
if registered ~= session then return cjson.encode({r = 'WRONG_SESSION', session = registered}) end
if redis.call('EXISTS', K_WORKERS .. ':res:' .. id) == 1 then return '{"r":"FULL"}' end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = string.format('%d', now_ms + tonumber(ARGV[3]))
redis.call('ZADD', K_LIVENESS, deadline, id)
redis.call('HSET', K_BEATS, id, session .. '|' .. string.format('%d', now_ms))
return '{"r":"OK","renewed":0,"revoked":[],"cancel":[],"deadline":' .. deadline .. '}'
