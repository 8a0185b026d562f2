-- revoke_worker.lua: revokes a worker id, with or without a key of its own (a machine lost or
-- stolen): marks its key record revoked, so that masters refuse its hellos (KEY_REVOKED) and
-- register.lua its registrations, and fences its session at once: the tasks it holds are taken
-- back (each to the queue, as register.lua takes back a replaced session's, but not counted as a
-- lease loss), and its record, liveness entry and reservations are removed, so that its session's
-- heartbeats, acknowledgements and ends fail every script's fencing from then on. Its shape count
-- drops as remove_worker.lua's does. Publishes a worker event what=revoked: every master closes
-- that worker's connection. Safe to repeat: a second run finds nothing to take back.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:worker-keys  HASH  worker id -> key record (worker_key.lua)
-- ARGV: [1] worker id  [2] events max length
-- Returns JSON: {r="OK", key=record, session=the fenced session or '', requeued=[task ids],
--               failed=[task ids], cancelled=[task ids]}
-- libraries: parking
EVENTS_MAXLEN = ARGV[2]
local id = ARGV[1]
local K_KEYS = KEYS[CORE_KEYS + 1]
local now_ms = now_parts()
local raw = redis.call('HGET', K_KEYS, id)
local k = raw and cjson.decode(raw)
  or {worker = id, key_id = '', public = '', accept = '', created_at = 0, rotated_at = 0, revoked_at = 0}
if k.revoked_at == 0 then
  k.revoked_at = now_ms
  redis.call('HSET', K_KEYS, id, cjson.encode(k))
end
local out = {r = 'OK', key = k, session = '', requeued = {}, failed = {}, cancelled = {}}
local w = load_worker(id)
if w then
  out.session = w.session
  local err = take_back(id, now_ms, 'worker ' .. id .. ' was revoked', false, 'revoke', out)
  if err then return err end
  redis.call('HDEL', K_WORKERS, id)
  redis.call('ZREM', K_LIVENESS, id)
  redis.call('HDEL', K_BEATS, id)
  count_shape(shape_of(w), -1)
end
redis.call('DEL', res_key(id))
sharing().unreserve_worker(id)
emit('worker', {worker = id, session = out.session, what = 'revoked', key = k.key_id, at = now_ms})
return reply(out)
