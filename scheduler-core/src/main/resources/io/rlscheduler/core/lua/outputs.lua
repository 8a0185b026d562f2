-- outputs.lua: records what an attempt left in its run directory, stored in the artifact store by
-- its worker after the attempt ended. A worker-side write fenced as finish.lua's is (check_owned):
-- only the attempt holding the task's current epoch may write, while it runs or after it ended,
-- and only the record of its own attempt number; a stale attempt's write changes nothing. The
-- record's state moves by the table below, the same as io.rlscheduler.core.OutputsState's.
-- KEYS: the 17 core keys (lib.lua), then [18] {ns}:outputs:<task id> HASH attempt number -> JSON
--       record (the worker's fields below, plus state, epoch, worker, attempt and at, written here)
-- ARGV: [1] task id, [2] epoch, [3] worker id, [4] session id, [5] attempt number, [6] the
--       record's new state (PENDING, COMPLETE or INCOMPLETE), [7] the worker's fields as a JSON
--       object: manifest (key in the store), files, bytes (decimal text), error, skipped (list of
--       "path: why"), skipped_count
-- Returns JSON: {r="OK", epoch, state} | {r="DUPLICATE", outputs} (that final state is recorded
--   already) | {r="WRONG_STATE", outputs} (another final state is) | {r="STALE"|"WRONG_SESSION"|
--   "UNKNOWN_TASK", epoch, state}
local K_OUTPUTS = KEYS[18]
local task_id, epoch, worker, session, attempt, to = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local now_ms = now_parts()

local OUTPUTS_TRANSITIONS = {
  PENDING    = {PENDING = true, COMPLETE = true, INCOMPLETE = true},
  COMPLETE   = {},
  INCOMPLETE = {}
}
if not OUTPUTS_TRANSITIONS[to] then
  return redis.error_reply('BAD_ARGUMENT unknown outputs state ' .. tostring(to))
end

local st = load_task(task_id)
local denied = check_owned(st, epoch, worker, session)
if denied then return reply(denied) end
if tonumber(st.attempt) ~= tonumber(attempt) then
  return reply({r = 'STALE', epoch = st.epoch, state = st.state})
end

local raw = redis.call('HGET', K_OUTPUTS, attempt)
if raw then
  local from = cjson.decode(raw).state
  if not OUTPUTS_TRANSITIONS[from][to] then
    return reply({r = from == to and 'DUPLICATE' or 'WRONG_STATE', epoch = st.epoch, state = st.state, outputs = from})
  end
end
local rec = cjson.decode(ARGV[7])
rec.state, rec.epoch, rec.worker, rec.attempt, rec.at = to, epoch, worker, attempt, ms_text(now_ms)
redis.call('HSET', K_OUTPUTS, attempt, cjson.encode(rec))
return reply({r = 'OK', epoch = st.epoch, state = st.state})
