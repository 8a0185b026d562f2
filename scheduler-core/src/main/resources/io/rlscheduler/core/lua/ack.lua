-- ack.lua: workers confirm they started tasks: ASSIGNED -> RUNNING, and each task lease begins.
-- One call carries one or more acknowledgements (LeaseCore coalesces concurrent ones), each
-- decided on its own exactly as if it came alone. Replaying one on a RUNNING task of the same
-- epoch answers DUPLICATE and changes nothing.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] task lease ms  [2] events max length, then 4 per acknowledgement:
--       task id, epoch, worker id, session id
-- Returns a JSON array, one answer per acknowledgement in order:
--   {r="OK"|"DUPLICATE"|"STALE"|"WRONG_SESSION"|"WRONG_STATE"|"UNKNOWN_TASK", epoch, state}
--   or {r="ERROR", error} when the transition table refuses the move (lib.lua's transition)
EVENTS_MAXLEN = ARGV[2]
local lease = tonumber(ARGV[1])
local now_ms = now_parts()

local function ack(task_id, epoch, worker, session)
  local st = load_task(task_id)
  local denied = check_owned(st, epoch, worker, session)
  if denied then return denied end
  if st.state == 'RUNNING' then return {r = 'DUPLICATE', epoch = st.epoch, state = st.state} end
  if st.state ~= 'ASSIGNED' then return {r = 'WRONG_STATE', epoch = st.epoch, state = st.state} end
  local err = transition(st, 'RUNNING', now_ms, 'started on ' .. st.worker, 'worker')
  if err then return {r = 'ERROR', error = err.err} end
  st.started_at = ms_text(now_ms)
  st.deadline = fmt(now_ms + lease)
  redis.call('ZADD', K_DEADLINES, st.deadline, st.id)
  save_task(st)
  return {r = 'OK', epoch = st.epoch, state = st.state}
end

local out = {}
for i = 3, #ARGV, 4 do
  out[#out + 1] = ack(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3])
end
return reply(out)
