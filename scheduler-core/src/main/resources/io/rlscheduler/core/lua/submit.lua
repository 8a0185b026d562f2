-- submit.lua: adds tasks to the queue; idempotent by task id. The initial record written here is
-- mirrored by Replies.queued in Java (a test compares the two). One call carries one or more
-- submissions (LeaseCore coalesces concurrent ones), each decided on its own exactly as if it
-- came alone, in order (so two submissions of one id in one call: the second answers EXISTS).
-- KEYS: the 17 core keys (lib.lua), then one per submission:
--   KEYS[17 + i] {ns}:owner:<owner of submission i>  ZSET  task id -> submit seq
-- ARGV: [1] events max length, then 11 per submission:
--       task id, priority 0..999, gpus, cpu slots, memory bytes, selector JSON object, owner,
--       trace id, max attempts, max lease losses, spec JSON (opaque)
-- Returns a JSON array, one answer per submission in order:
--   {r="OK", seq=<submit seq>, at=<created at, ms>} (the caller knows the rest of the new record:
--   every other field is the submission's or the initial value below, as Replies.queued builds it)
--   or {r="EXISTS"} (the caller reads the existing record itself)
--   or {r="LIMIT", limit, allowed, current[, retry_after_ms]}: over one of the owner's limits
--   (submitting.lua's admit), nothing stored
-- libraries: submitting
EVENTS_MAXLEN = ARGV[1]
local now_ms = now_parts()
local now_text = ms_text(now_ms)

local out = {}
local n = (#ARGV - 1) / 11
-- Which ids exist already: one HMGET for the whole run instead of an HEXISTS per submission; an id
-- created earlier in this run counts too, so each is decided as if it came alone, in order.
local ids = {}
for i = 1, n do ids[i] = ARGV[2 + (i - 1) * 11] end
local existing = redis.call('HMGET', K_TASKS, unpack(ids))
local created = {}
for i = 1, n do
  local id = ids[i]
  if existing[i] or created[id] then
    out[i] = {r = 'EXISTS'}
  else
    out[i] = submit_one(KEYS[CORE_KEYS + i], 2 + (i - 1) * 11, now_ms, now_text)
    created[id] = out[i].r == 'OK'
  end
end
return reply(out)
