-- submit.lua: adds a task to the queue; idempotent by task id.
-- KEYS: the 16 core keys (lib.lua), then
--   KEYS[17] {ns}:owner:<owner>  ZSET  task id -> submit seq
-- ARGV: [1] task id  [2] priority 0..999  [3] gpus  [4] cpu slots  [5] memory bytes
--       [6] selector JSON object  [7] owner  [8] trace id  [9] max attempts  [10] max lease losses
--       [11] spec JSON (opaque)  [12] events max length
-- Returns JSON: {r="OK", task=<state>} or {r="EXISTS", task=<existing state>}.
EVENTS_MAXLEN = tonumber(ARGV[12])
local id = ARGV[1]
local existing = load_task(id)
if existing then
  return reply({r = 'EXISTS', task = existing})
end
local now_ms = now_parts()
local seq = redis.call('INCR', K_SEQ)
local st = {
  id = id, state = 'QUEUED', priority = tonumber(ARGV[2]), seq = seq,
  gpus = tonumber(ARGV[3]), cpu = tonumber(ARGV[4]), mem = tonumber(ARGV[5]),
  selector = cjson.decode(ARGV[6]), owner = ARGV[7], trace = ARGV[8],
  max_attempts = tonumber(ARGV[9]), max_lease_losses = tonumber(ARGV[10]),
  attempt = 0, lease_losses = 0, epoch = '0', worker = '', session = '', gpu_ids = '',
  deadline = 0, cancel_requested = false, created_at = now_ms, updated_at = now_ms,
  reason = 'submitted', error = '', metrics = '', has_exit_code = false, exit_code = 0,
  history = {{at = now_ms, from = '', to = 'QUEUED', epoch = '0', worker = '', reason = 'submitted'}}
}
redis.call('HSET', K_SPECS, id, ARGV[11])
save_task(st)
redis.call('ZADD', K_QUEUE, queue_score(st), id)
redis.call('ZADD', K_STATE['QUEUED'], seq, id)
redis.call('ZADD', KEYS[CORE_KEYS + 1], seq, id)
emit('task', {task = id, from = '', to = 'QUEUED', epoch = '0', worker = '', attempt = 0,
              reason = 'submitted', via = 'submit', at = now_ms})
return reply({r = 'OK', task = st})
