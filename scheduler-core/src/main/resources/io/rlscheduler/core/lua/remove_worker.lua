-- remove_worker.lua: forgets a worker that is gone for good (a machine retired or scaled away):
-- its record, liveness entry, reservations and its count in the shapes (so that tasks only it
-- could run are parked by the next claim that meets them). Only a worker whose liveness lease has
-- expired and that holds no task is removed: a task still held at its epoch must first be taken
-- back by the reaper (its lease runs out) or end. Should the worker's process come back after
-- all, its next heartbeat finds it unknown and it registers again. Safe to replay.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] worker id  [2] events max length
-- Returns JSON: {r="REMOVED"} | {r="UNKNOWN_WORKER"} | {r="LIVE", deadline=ms}
--             | {r="HOLDS_TASKS", tasks=[task ids]}
-- libraries: parking
EVENTS_MAXLEN = ARGV[2]
local id = ARGV[1]
local w = load_worker(id)
if not w then return reply({r = 'UNKNOWN_WORKER'}) end
local now_ms = now_parts()
local live_until = liveness_of(id)
if live_until > now_ms then return reply({r = 'LIVE', deadline = live_until}) end
local held = {}
for task_id, r in pairs(reservations(id)) do
  local st = load_task(task_id)
  if st and st.epoch == r.e and st.worker == id and (st.state == 'ASSIGNED' or st.state == 'RUNNING') then
    held[#held + 1] = task_id
  end
end
if #held > 0 then
  table.sort(held)
  return reply({r = 'HOLDS_TASKS', tasks = held})
end
redis.call('HDEL', K_WORKERS, id)
redis.call('ZREM', K_LIVENESS, id)
redis.call('HDEL', K_BEATS, id)
redis.call('DEL', res_key(id))
sharing().unreserve_worker(id)
count_shape(shape_of(w), -1)
emit('worker', {worker = id, session = w.session, what = 'removed', at = now_ms})
return reply({r = 'REMOVED'})
