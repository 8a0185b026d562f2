-- heartbeat.lua: renews a worker's liveness lease and the task lease of each task it reports
-- whose epoch is still current and whose lease has not yet expired by the Redis clock; reports
-- the others as revoked (the worker must stop them). An expired lease is never revived, even if
-- no reaper has taken the task back yet: expiry is decided by the one clock, not by who comes first.
-- Also repairs the worker's side of ownership: a reservation whose task is no longer held by
-- this worker at that epoch is dropped (capacity is derived from reservations, so this frees
-- nothing twice).
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] worker id  [2] session id  [3] liveness lease ms  [4] task lease ms
--       [5] events max length  [6..] pairs: task id, epoch
-- A worker that holds no task and no reservation renews with renew.lua instead, which does the
-- same for it without this prelude.
-- Returns JSON: {r="OK", renewed=n, revoked=[{task, epoch}], cancel=[{task, epoch}], deadline=ms}
--   cancel lists held tasks whose cancel was requested: the worker must stop them.
--            or {r="UNKNOWN_WORKER"} / {r="WRONG_SESSION", session=current}
EVENTS_MAXLEN = ARGV[5]
local id, session = ARGV[1], ARGV[2]
local w = load_worker(id)
if not w then return reply({r = 'UNKNOWN_WORKER'}) end
if w.session ~= session then return reply({r = 'WRONG_SESSION', session = w.session}) end
local now_ms = now_parts()
local deadline = now_ms + tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local out = {r = 'OK', renewed = 0, revoked = {}, cancel = {}, deadline = deadline}
local seen = {}  -- task id -> decoded state, so the repair pass below does not decode it again
for i = 6, #ARGV, 2 do
  local task_id, epoch = ARGV[i], ARGV[i + 1]
  local st = load_task(task_id)
  seen[task_id] = st or false
  local expired = st and st.state == 'RUNNING' and tonumber(st.deadline) <= now_ms
  if st and not expired and st.epoch == epoch and st.worker == id and (st.state == 'ASSIGNED' or st.state == 'RUNNING') then
    if st.state == 'RUNNING' then
      -- Usage so far, once another minimum charge has passed (lib.lua's sharing).
      if st.claimed_at and now_ms - tonumber(st.claimed_at) - tonumber(st.charged) >= tonumber(st.charge_step) then
        sharing().charge_running(st, now_ms)
      end
      st.deadline = fmt(now_ms + lease)
      redis.call('ZADD', K_DEADLINES, st.deadline, task_id)
      save_task(st)
    end
    out.renewed = out.renewed + 1
    if st.cancel_requested then out.cancel[#out.cancel + 1] = {task = task_id, epoch = epoch} end
  else
    out.revoked[#out.revoked + 1] = {task = task_id, epoch = epoch}
  end
end
local K_RES = res_key(id)
for task_id, r in pairs(reservations(id)) do
  local st = seen[task_id]
  if st == nil then st = load_task(task_id) end
  if not (st and st.epoch == r.e and st.worker == id and (st.state == 'ASSIGNED' or st.state == 'RUNNING')) then
    redis.call('HDEL', K_RES, task_id)
    emit('worker', {worker = id, session = session, what = 'repaired', task = task_id, at = now_ms})
  end
end
beat(id, session, now_ms, deadline)
return reply(out)
