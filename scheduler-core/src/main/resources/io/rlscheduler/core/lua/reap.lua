-- reap.lua: takes back tasks whose deadline passed, by the Redis clock: an ASSIGNED task not
-- acknowledged in time goes back to the queue; a RUNNING task whose lease expired goes back to
-- the queue as a lease loss (or FAILED when a limit is exhausted, CANCELLED when cancel was
-- requested). Each step is conditional on state and deadline inside this one script, so two
-- reapers, or a reaper and a late heartbeat, can never requeue a task twice. It also ends the
-- reservations of workers that are no longer live.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:leader  HASH  the masters' leadership lease (leader.lua)
-- ARGV: [1] max tasks per call  [2] events max length  [3] reaping master id ('' when not a master)
--       [4] its leadership epoch
-- Returns JSON: {r="OK", requeued=[ids], failed=[ids], cancelled=[ids], more=bool} or {r="NOT_LEADER"}
EVENTS_MAXLEN = ARGV[2]
local limit = tonumber(ARGV[1])
local now_ms = now_parts()
if not check_leader(KEYS[CORE_KEYS + 1], ARGV[3], ARGV[4], now_ms) then
  return reply({r = 'NOT_LEADER', requeued = {}, failed = {}, cancelled = {}, more = false})
end
local due = redis.call('ZRANGEBYSCORE', K_DEADLINES, '-inf', now_ms, 'LIMIT', 0, limit)
local out = {r = 'OK', requeued = {}, failed = {}, cancelled = {}, more = #due == limit}
for _, task_id in ipairs(due) do
  local st = load_task(task_id)
  if not st or (st.state ~= 'ASSIGNED' and st.state ~= 'RUNNING') then
    redis.call('ZREM', K_DEADLINES, task_id)
  elseif tonumber(st.deadline) <= now_ms then
    local to
    if st.state == 'ASSIGNED' then
      to = requeue(st, now_ms, 'not acknowledged by ' .. st.worker .. ' in time', false, 'reaper')
    else
      to = requeue(st, now_ms, 'task lease of ' .. st.worker .. ' expired', true, 'reaper')
    end
    if type(to) == 'table' then return to end
    tally(out, to, task_id)
  end
end
-- A reservation (lib.lua, "Sharing between owners") held by a worker that is no longer live ends
-- here, so that the next claim of another worker can take it over.
local sh = sharing()
if redis.call('EXISTS', sh.K_RESV) == 1 then
  for worker in pairs(sh.reserved().worker) do
    if tonumber(redis.call('ZSCORE', K_LIVENESS, worker) or '0') <= now_ms then sh.unreserve_worker(worker) end
  end
end
return reply(out)
