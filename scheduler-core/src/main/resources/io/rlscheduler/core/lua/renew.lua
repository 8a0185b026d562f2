-- renew.lua: the heartbeat of a worker that holds no task, the one a lab of idle machines sends
-- thousands of a second. Bare: loaded without lib.lua (whose prelude costs more than the renewal
-- itself), so it keys and writes as lib.lua's beat() does, and it must stay in step with it.
-- Renews the worker's liveness lease: its deadline in the liveness set, the time in the beats hash;
-- the record itself is read for the session and not written. A worker that still has
-- reservations is answered FULL: heartbeat.lua repairs them (it drops those no task backs).
-- KEYS: [1] {ns}:workers  [2] {ns}:liveness
-- ARGV: [1] worker id  [2] session id  [3] liveness lease ms
-- Returns JSON as heartbeat.lua: {r="OK", renewed=0, revoked=[], cancel=[], deadline=ms},
--   or {r="UNKNOWN_WORKER"} / {r="WRONG_SESSION", session=current} / {r="FULL"}
redis.replicate_commands()
local K_WORKERS, K_LIVENESS = KEYS[1], KEYS[2]
local id, session = ARGV[1], ARGV[2]
local raw = redis.call('HGET', K_WORKERS, id)
if not raw then return '{"r":"UNKNOWN_WORKER"}' end
local registered = cjson.decode(raw).session
if registered ~= session then return cjson.encode({r = 'WRONG_SESSION', session = registered}) end
if redis.call('EXISTS', K_WORKERS .. ':res:' .. id) == 1 then return '{"r":"FULL"}' end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local deadline = string.format('%d', now_ms + tonumber(ARGV[3]))
redis.call('ZADD', K_LIVENESS, deadline, id)
redis.call('HSET', K_WORKERS .. ':beat', id, string.format('%d', now_ms))
return '{"r":"OK","renewed":0,"revoked":[],"cancel":[],"deadline":' .. deadline .. '}'
