-- submitting.lua: one submission, as a function, for submit.lua and submit_claim.lua; loaded after
-- lib.lua. submit_one(k_owner, a, now_ms, now_text): ARGV from index a are the submission's 11
-- arguments (task id, ..., spec JSON) as submit.lua takes them; the caller checked that the id is
-- new. Returns {r="OK", seq, at}.
local function submit_one(k_owner, a, now_ms, now_text)
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
  redis.call('ZADD', k_owner, seq_text, id)
  emit_task(id, '', 'QUEUED', '0', '', '0', 'submitted', 'submit', now_ms)
  return {r = 'OK', seq = seq_text, at = now_text}
end

