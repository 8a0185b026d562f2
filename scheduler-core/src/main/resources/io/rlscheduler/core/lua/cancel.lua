-- cancel.lua: cancels a task. A queued task becomes CANCELLED at once. A task held by a worker is
-- marked cancel-requested: the worker must stop it, and it becomes CANCELLED when the worker
-- records its end (finish.lua) or its lease is lost. Safe to replay.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] task id  [2] reason  [3] events max length
-- Returns JSON: {r="CANCELLED"} | {r="CANCEL_REQUESTED", worker, epoch} | {r="WRONG_STATE", state}
--             | {r="UNKNOWN_TASK"}
EVENTS_MAXLEN = ARGV[3]
local st = load_task(ARGV[1])
if not st then return reply({r = 'UNKNOWN_TASK'}) end
if st.state == 'CANCELLED' then return reply({r = 'CANCELLED', state = st.state}) end
if TERMINAL[st.state] then return reply({r = 'WRONG_STATE', state = st.state}) end
local now_ms = now_parts()
if st.state == 'QUEUED' then
  local err = transition(st, 'CANCELLED', now_ms, ARGV[2], 'cancel')
  if err then return err end
  st.finished_at = ms_text(now_ms)
  save_task(st)
  return reply({r = 'CANCELLED', state = st.state})
end
if not st.cancel_requested then
  st.cancel_requested = true
  st.updated_at = ms_text(now_ms)
  save_task(st)
  emit('task', {task = st.id, from = st.state, to = st.state, epoch = st.epoch, worker = st.worker,
                attempt = st.attempt, reason = 'cancel requested: ' .. ARGV[2], via = 'cancel', at = now_ms})
end
return reply({r = 'CANCEL_REQUESTED', worker = st.worker, epoch = st.epoch, state = st.state})
