-- register.lua: registers a worker process (worker id + session id) with its resources.
-- The same session registering again only refreshes its liveness (safe to replay). A new session
-- of a known worker means the old process is gone: the tasks the old session held are taken back
-- at once (a lease loss each) and the record starts afresh.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] worker id  [2] session id  [3] labels JSON object  [4] cpu slots  [5] memory bytes
--       [6] GPU ids, comma-separated  [7] liveness lease ms  [8] events max length
-- A worker whose shape (what it has in all, and its labels: parking.lua's shape_of) no registered
-- worker had brings back the parked tasks that fit it (parking.lua's unpark).
-- Returns JSON: {r="OK", requeued=[task ids], failed=[task ids], cancelled=[task ids], deadline=ms,
--               unparked=n}
-- libraries: parking
EVENTS_MAXLEN = ARGV[8]
local id, session = ARGV[1], ARGV[2]
local now_ms = now_parts()
local deadline = now_ms + tonumber(ARGV[7])
local w = load_worker(id)
local out = {r = 'OK', requeued = {}, failed = {}, cancelled = {}, deadline = deadline, unparked = 0}
if w and w.session == session then
  w.heartbeat_at = now_ms
  w.liveness_deadline = deadline
  save_worker(w)
  redis.call('ZADD', K_LIVENESS, deadline, id)
  return reply(out)
end
local old_shape = w and shape_of(w)
if w then
  for task_id, r in pairs(reservations(id)) do
    local st = load_task(task_id)
    if st and st.epoch == r.e and st.worker == id and (st.state == 'ASSIGNED' or st.state == 'RUNNING') then
      local to = requeue(st, now_ms, 'worker ' .. id .. ' restarted (new session ' .. session .. ')', true, 'register')
      if type(to) == 'table' then return to end
      if to == 'QUEUED' then out.requeued[#out.requeued + 1] = task_id
      elseif to == 'FAILED' then out.failed[#out.failed + 1] = task_id
      else out.cancelled[#out.cancelled + 1] = task_id end
    end
  end
end
-- A new session starts without reservations: what the old one held was taken back above, and
-- anything left over is stale.
redis.call('DEL', res_key(id))
w = {
  id = id, session = session, labels = cjson.decode(ARGV[3]),
  cpu = tonumber(ARGV[4]), mem = tonumber(ARGV[5]), gpus = ARGV[6],
  registered_at = now_ms, heartbeat_at = now_ms, liveness_deadline = deadline
}
save_worker(w)
redis.call('ZADD', K_LIVENESS, deadline, id)
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
