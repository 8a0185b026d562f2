-- submitting.lua: one submission, as a function, for submit.lua and submit_claim.lua; loaded after
-- lib.lua. submit_one(k_owner, a, now_ms, now_text): ARGV from index a are the submission's 11
-- arguments (task id, ..., spec JSON) as submit.lua takes them; the caller checked that the id is
-- new. Returns {r="OK", seq, at}, or {r="LIMIT", ...} (admit) having written nothing.
-- The owner's limits on submitting (limits_of): nil when the task may be queued, else the refusal
-- {r="LIMIT", limit, allowed, current[, retry_after_ms]}; writes the rate's bucket only when admitted.
local function admit(owner, gpus, now_ms)
  local sh = sharing()
  local l = sh.limits_of(owner)
  if l.max_gpus_per_task ~= nil and gpus > l.max_gpus_per_task then
    return {r = 'LIMIT', limit = 'max_gpus_per_task', allowed = l.max_gpus_per_task, current = gpus}
  end
  if l.max_gpus ~= nil and gpus > l.max_gpus then
    return {r = 'LIMIT', limit = 'max_gpus', allowed = l.max_gpus, current = gpus}
  end
  if l.max_queued == nil and l.rate == nil then return nil end
  if l.max_queued ~= nil then
    local queued = sh.counter(owner, 'queued')
    if queued >= l.max_queued then
      return {r = 'LIMIT', limit = 'max_queued', allowed = l.max_queued, current = queued}
    end
  end
  if l.rate ~= nil then
    local burst = l.burst or math.max(1, l.rate)
    local wait = sh.take_token(owner, l.rate, burst, now_ms)
    if wait then return {r = 'LIMIT', limit = 'rate', allowed = l.rate, current = burst, retry_after_ms = wait} end
  end
  return nil
end

local function submit_one(k_owner, a, now_ms, now_text)
  local id = ARGV[a]
  local refused = admit(ARGV[a + 6], tonumber(ARGV[a + 2]), now_ms)
  if refused then return refused end
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
  local sh = sharing()
  if sh.bump(st.owner, 'queued', 1) == 1 then redis.call('SADD', sh.K_OWNERS, st.owner) end
  sh.owner_enqueue(st, now_ms)
  emit_task(id, '', 'QUEUED', '0', '', '0', 'submitted', 'submit', now_ms)
  return {r = 'OK', seq = seq_text, at = now_text}
end

