-- finish.lua: records how attempts ended (SUCCEEDED, FAILED, CANCELLED or TIMED_OUT) and releases
-- their reservations, each exactly once: fenced by epoch, and a replay of the same outcome answers
-- DUPLICATE without changing anything. One call carries one or more outcomes (LeaseCore coalesces
-- concurrent ones), each decided on its own exactly as if it came alone.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] events max length, then 10 per outcome:
--       task id, epoch, worker id, session id, final state, exit code ('' when none),
--       error message, final metrics JSON ('' when none), run directory on the worker ('' when unknown),
--       output lines the attempt printed, decimal ('' when unknown; stored as log_lines)
-- Returns a JSON array, one answer per outcome in order:
--   {r="OK"|"DUPLICATE"|"STALE"|"WRONG_SESSION"|"WRONG_STATE"|"UNKNOWN_TASK", epoch, state}
--   or {r="ERROR", error} when the transition table refuses the move (lib.lua's transition), or
--   for an argument no caller of LeaseCore can send (error "BAD_ARGUMENT ...": a non-terminal state)
EVENTS_MAXLEN = ARGV[1]
local now_ms = now_parts()

local function finish(task_id, epoch, worker, session, final, exit_code, error, metrics, run_dir, log_lines)
  if not TERMINAL[final] then
    return {r = 'ERROR', error = 'BAD_ARGUMENT final state must be terminal, was ' .. final}
  end
  local st = load_task(task_id)
  local denied = check_owned(st, epoch, worker, session)
  if denied then return denied end
  if TERMINAL[st.state] then
    local same = st.state == final
    return {r = same and 'DUPLICATE' or 'WRONG_STATE', epoch = st.epoch, state = st.state}
  end
  release(st)
  local reason = final == 'SUCCEEDED' and 'exited with code 0' or (error ~= '' and error or final:lower())
  -- Set before the transition: its event carries the exit code and the line count.
  if exit_code ~= '' then
    st.has_exit_code = true
    st.exit_code = exit_code
  end
  if log_lines ~= '' then st.log_lines = log_lines end
  local err = transition(st, final, now_ms, reason, 'worker')
  if err then return {r = 'ERROR', error = err.err} end
  st.error = error
  st.metrics = metrics
  st.run_dir = run_dir
  st.finished_at = ms_text(now_ms)
  st.deadline = '0'
  redis.call('ZREM', K_DEADLINES, st.id)
  save_task(st)
  return {r = 'OK', epoch = st.epoch, state = st.state}
end

local out = {}
for i = 2, #ARGV, 10 do
  out[#out + 1] = finish(ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4], ARGV[i + 5], ARGV[i + 6],
                         ARGV[i + 7], ARGV[i + 8], ARGV[i + 9])
end
return reply(out)
