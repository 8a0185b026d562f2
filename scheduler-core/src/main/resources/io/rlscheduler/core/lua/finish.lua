-- finish.lua: records how attempts ended (SUCCEEDED, FAILED, CANCELLED or TIMED_OUT) and releases
-- their reservations, each exactly once: fenced by epoch, and a replay of the same outcome answers
-- DUPLICATE without changing anything. One call carries one or more outcomes (LeaseCore coalesces
-- concurrent ones), each decided on its own exactly as if it came alone. An outcome may carry the
-- attempt's provenance, stored as provenance.lua stores it (same fence, same field, HSETNX) in the
-- same run: an attempt that ends before its provenance was written alone costs no run of its own.
-- KEYS: the 17 core keys (lib.lua), then per outcome its task's {ns}:provenance:<task id>
-- ARGV: [1] events max length, then 11 per outcome:
--       task id, epoch, worker id, session id, final state, exit code ('' when none),
--       error message, final metrics JSON ('' when none), run directory on the worker ('' when unknown),
--       output lines the attempt printed, decimal ('' when unknown; stored as log_lines),
--       provenance JSON ('' when none; stored as given, never parsed here)
-- Returns a JSON array, one answer per outcome in order:
--   {r="OK"|"DUPLICATE"|"STALE"|"WRONG_SESSION"|"WRONG_STATE"|"UNKNOWN_TASK", epoch, state}
--   or {r="ERROR", error} when the transition table refuses the move (lib.lua's transition), or
--   for an argument no caller of LeaseCore can send (error "BAD_ARGUMENT ...": a non-terminal state);
--   a call whose ARGV and KEYS are not 11 arguments and one key per outcome is refused whole, an
--   error reply "BAD_ARGUMENT ...", nothing done
EVENTS_MAXLEN = ARGV[1]
local now_ms = now_parts()

local function finish(k_provenance, task_id, epoch, worker, session, final, exit_code, error, metrics, run_dir,
                      log_lines, provenance)
  if not TERMINAL[final] then
    return {r = 'ERROR', error = 'BAD_ARGUMENT final state must be terminal, was ' .. final}
  end
  local st = load_task(task_id)
  local denied = check_owned(st, epoch, worker, session)
  if denied then return denied end
  -- provenance.lua's rule: only this attempt passes check_owned, so the field holds its own.
  if provenance ~= '' then redis.call('HSETNX', k_provenance, st.attempt, provenance) end
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

local n = (#ARGV - 1) / 11
if n ~= math.floor(n) or #KEYS ~= CORE_KEYS + n then
  -- A caller of another argument layout (10 per outcome before provenance): refused whole, nothing done.
  return redis.error_reply('BAD_ARGUMENT finish takes 11 arguments and a provenance key per outcome, was given '
      .. (#ARGV - 1) .. ' arguments and ' .. (#KEYS - CORE_KEYS) .. ' keys')
end
local out = {}
for i = 1, n do
  local a = 2 + (i - 1) * 11
  out[i] = finish(KEYS[CORE_KEYS + i], ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5],
                  ARGV[a + 6], ARGV[a + 7], ARGV[a + 8], ARGV[a + 9], ARGV[a + 10])
end
return reply(out)
