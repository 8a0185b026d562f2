-- ack.lua: the worker confirms it started the task: ASSIGNED -> RUNNING, and the task lease begins.
-- Replaying it on a RUNNING task of the same epoch answers DUPLICATE and changes nothing.
-- KEYS: the 16 core keys (lib.lua)
-- ARGV: [1] task id  [2] epoch  [3] worker id  [4] session id  [5] task lease ms  [6] events max length
-- Returns JSON: {r="OK"|"DUPLICATE"|"STALE"|"WRONG_SESSION"|"WRONG_STATE"|"UNKNOWN_TASK", epoch, state}
EVENTS_MAXLEN = tonumber(ARGV[6])
local st = load_task(ARGV[1])
local denied = check_owned(st, ARGV[2], ARGV[3], ARGV[4])
if denied then return reply(denied) end
if st.state == 'RUNNING' then return reply({r = 'DUPLICATE', epoch = st.epoch, state = st.state}) end
if st.state ~= 'ASSIGNED' then return reply({r = 'WRONG_STATE', epoch = st.epoch, state = st.state}) end
local now_ms = now_parts()
local err = transition(st, 'RUNNING', now_ms, 'started on ' .. st.worker, 'worker')
if err then return err end
st.started_at = now_ms
st.deadline = now_ms + tonumber(ARGV[5])
redis.call('ZADD', K_DEADLINES, st.deadline, st.id)
save_task(st)
return reply({r = 'OK', epoch = st.epoch, state = st.state})
