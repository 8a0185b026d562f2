-- provenance.lua: stores attempts' provenance (the code each ran, where, on which GPUs) in each
-- task's own provenance hash, field = the attempt number the task record holds, for the attempt
-- that holds the task only: fenced by epoch, worker and session (lib.lua's check_owned), so a
-- stale or foreign attempt's write changes nothing. The task record is read, never written: it
-- stays as small as every transition needs it. One call carries one or more writes (LeaseCore
-- coalesces concurrent ones), each decided on its own exactly as if it came alone.
-- KEYS: the 17 core keys (lib.lua), then per write its task's {ns}:provenance:<task id>
-- ARGV: 5 per write: task id, epoch, worker id, session id, provenance JSON (stored as given,
--       never parsed here; see ProvenanceFormat)
-- Returns a JSON array, one answer per write in order:
--   {r="OK"|"DUPLICATE"|"STALE"|"WRONG_SESSION"|"UNKNOWN_TASK", epoch, state}
--   DUPLICATE: the attempt's provenance is stored already (a replay); it is kept as it is.

local function store(k_provenance, task_id, epoch, worker, session, json)
  local st = load_task(task_id)
  local denied = check_owned(st, epoch, worker, session)
  if denied then return denied end
  -- Only this attempt passes check_owned, so its field holds its own earlier write, if any.
  local stored = redis.call('HSETNX', k_provenance, st.attempt, json)
  return {r = stored == 1 and 'OK' or 'DUPLICATE', epoch = st.epoch, state = st.state}
end

local out = {}
for i = 1, #ARGV / 5 do
  local a = (i - 1) * 5
  out[i] = store(KEYS[CORE_KEYS + i], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5])
end
return reply(out)
