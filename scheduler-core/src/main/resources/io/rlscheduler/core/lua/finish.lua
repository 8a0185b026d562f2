-- finish.lua: records how an attempt ended (SUCCEEDED, FAILED, CANCELLED or TIMED_OUT) and
-- releases its reservation, exactly once: fenced by epoch, and a replay of the same outcome
-- answers DUPLICATE without changing anything.
-- KEYS: the 16 core keys (lib.lua)
-- ARGV: [1] task id  [2] epoch  [3] worker id  [4] session id  [5] final state
--       [6] exit code ('' when none)  [7] error message  [8] final metrics JSON ('' when none)
--       [9] events max length  [10] run directory on the worker ('' when unknown)
-- Returns JSON: {r="OK"|"DUPLICATE"|"STALE"|"WRONG_SESSION"|"WRONG_STATE"|"UNKNOWN_TASK", epoch, state}
EVENTS_MAXLEN = tonumber(ARGV[9])
local final = ARGV[5]
if not TERMINAL[final] then
  return redis.error_reply('BAD_ARGUMENT final state must be terminal, was ' .. final)
end
local st = load_task(ARGV[1])
local denied = check_owned(st, ARGV[2], ARGV[3], ARGV[4])
if denied then return reply(denied) end
if TERMINAL[st.state] then
  local same = st.state == final
  return reply({r = same and 'DUPLICATE' or 'WRONG_STATE', epoch = st.epoch, state = st.state})
end
local now_ms = now_parts()
release(st)
local reason = final == 'SUCCEEDED' and 'exited with code 0' or (ARGV[7] ~= '' and ARGV[7] or final:lower())
local err = transition(st, final, now_ms, reason, 'worker')
if err then return err end
if ARGV[6] ~= '' then
  st.has_exit_code = true
  st.exit_code = tonumber(ARGV[6])
end
st.error = ARGV[7]
st.metrics = ARGV[8]
st.run_dir = ARGV[10] or ''
st.finished_at = now_ms
st.deadline = 0
redis.call('ZREM', K_DEADLINES, st.id)
save_task(st)
return reply({r = 'OK', epoch = st.epoch, state = st.state})
