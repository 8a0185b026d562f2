-- register.lua: registers a worker process (worker id + session id) with its resources.
-- The same session registering again only refreshes its liveness (safe to replay). A new session
-- of a known worker means the old process is gone: the tasks the old session held are taken back
-- at once (a lease loss each) and the record starts afresh.
-- A worker id that was revoked (revoke_worker.lua) is refused, and nothing changes: a machine
-- whose key was revoked cannot come back by registering.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:worker-keys  HASH  worker id -> key record (worker_key.lua)
-- ARGV: [1] worker id  [2] session id  [3] labels JSON object  [4] cpu slots  [5] memory bytes
--       [6] GPU ids, comma-separated  [7] liveness lease ms  [8] events max length
-- A worker whose shape (what it has in all, and its labels: parking.lua's shape_of) no registered
-- worker had brings back the parked tasks that fit it (parking.lua's unpark).
-- Returns JSON: {r="OK", requeued=[task ids], failed=[task ids], cancelled=[task ids], deadline=ms,
--               unparked=n}, or {r="REVOKED", revoked_at=ms}
-- libraries: parking
EVENTS_MAXLEN = ARGV[8]
local id, session = ARGV[1], ARGV[2]
local key = redis.call('HGET', KEYS[CORE_KEYS + 1], id)
if key then
  local revoked_at = cjson.decode(key).revoked_at
  if revoked_at > 0 then return reply({r = 'REVOKED', revoked_at = revoked_at}) end
end
local now_ms = now_parts()
local deadline = now_ms + tonumber(ARGV[7])
local w = load_worker(id)
local out = {r = 'OK', requeued = {}, failed = {}, cancelled = {}, deadline = deadline, unparked = 0}
if w and w.session == session then
  beat(id, session, now_ms, deadline)
  return reply(out)
end
local old_shape = w and shape_of(w)
if w then
  local err = take_back(id, now_ms, 'worker ' .. id .. ' restarted (new session ' .. session .. ')', true, 'register', out)
  if err then return err end
end
-- A new session starts without reservations: what the old one held was taken back above, and
-- anything left over is stale.
redis.call('DEL', res_key(id))
w = {
  id = id, session = session, labels = cjson.decode(ARGV[3]),
  cpu = tonumber(ARGV[4]), mem = tonumber(ARGV[5]), gpus = ARGV[6],
  registered_at = now_ms
}
save_worker(w)
beat(id, session, now_ms, deadline)
emit('worker', {worker = id, session = session, what = 'registered', at = now_ms})
local shape = shape_of(w)
-- Counted again also when the shape did not change but is missing from the counts (they were
-- edited or lost): the next claim then finds the totals off and counts them all again from the
-- worker records.
if old_shape ~= shape or redis.call('HEXISTS', K_SHAPES, shape) == 0 then
  if old_shape and old_shape ~= shape then count_shape(old_shape, -1) end
  if count_shape(shape, 1) == 1 then
    out.unparked = unpark({decode_shape(shape)}, 'worker ' .. id .. ' registered, and it could run it', now_ms)
  end
end
return reply(out)
