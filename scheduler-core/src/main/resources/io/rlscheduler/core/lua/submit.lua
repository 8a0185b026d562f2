-- submit.lua: adds tasks to the queue; idempotent by task id. The initial record written here is
-- mirrored by Replies.queued in Java (a test compares the two). One call carries one or more
-- submissions (LeaseCore coalesces concurrent ones), each decided on its own exactly as if it
-- came alone, in order (so two submissions of one id in one call: the second answers EXISTS).
-- KEYS: the 16 core keys (lib.lua), then one per submission:
--   KEYS[16 + i] {ns}:owner:<owner of submission i>  ZSET  task id -> submit seq
-- ARGV: [1] events max length, then 11 per submission:
--       task id, priority 0..999, gpus, cpu slots, memory bytes, selector JSON object, owner,
--       trace id, max attempts, max lease losses, spec JSON (opaque)
-- Returns a JSON array, one answer per submission in order:
--   {r="OK", seq=<submit seq>, at=<created at, ms>} (the caller knows the rest of the new record:
--   every other field is the submission's or the initial value below, as Replies.queued builds it)
--   or {r="EXISTS"} (the caller reads the existing record itself)
EVENTS_MAXLEN = ARGV[1]
local now_ms = now_parts()
local now_text = ms_text(now_ms)

local function submit(k_owner, a)
  local id = ARGV[a]
  local seq = redis.call('INCR', K_SEQ)
  local seq_text = fmt(seq)
  local st = {
    id = id, state = 'QUEUED', priority = ARGV[a + 1], seq = seq_text,
    gpus = ARGV[a + 2], cpu = ARGV[a + 3], mem = ARGV[a + 4],
    selector = cjson.decode(ARGV[a + 5]), owner = ARGV[a + 6], trace = ARGV[a + 7],
    max_attempts = ARGV[a + 8], max_lease_losses = ARGV[a + 9],
    attempt = '0', lease_losses = '0', epoch = '0', worker = '', session = '', gpu_ids = '',
    deadline = '0', cancel_requested = false, created_at = now_text, updated_at = now_text,
    reason = 'submitted', error = '', metrics = '', has_exit_code = false, exit_code = '0',
    history = '[' .. history_entry(now_text, '', 'QUEUED', '0', '', 'submitted') .. ']'
  }
  redis.call('HSET', K_SPECS, id, ARGV[a + 10])
  save_task(st)
  redis.call('ZADD', K_QUEUE, fmt(queue_score(st)), id)
  redis.call('ZADD', K_STATE['QUEUED'], seq_text, id)
  redis.call('ZADD', k_owner, seq_text, id)
  emit_task(id, '', 'QUEUED', '0', '', '0', 'submitted', 'submit', now_ms)
  return {r = 'OK', seq = seq_text, at = now_text}
end

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
    out[i] = submit(KEYS[CORE_KEYS + i], 2 + (i - 1) * 11)
    created[id] = true
  end
end
return reply(out)
