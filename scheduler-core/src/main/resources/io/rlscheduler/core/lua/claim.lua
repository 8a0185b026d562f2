-- claim.lua: assigns queued tasks that fit a live worker's free capacity, in queue order
-- (priority, then submit order), skipping tasks that do not fit. For each: reserves exact GPU ids,
-- bumps the fencing epoch, records ownership on both sides, sets the acknowledgement deadline.
-- A replay with the same request id returns the first answer and changes nothing. An answer that
-- assigned nothing is not kept: replaying it may assign tasks, which the replaying caller then
-- receives, so nothing is lost or given twice, and an idle cluster's claims leave no keys behind.
-- KEYS: the 16 core keys (lib.lua), then
--   KEYS[17] {ns}:request:claim:<request id>  STRING  the answer, kept for the request TTL
--   KEYS[18] {ns}:leader                      HASH    the masters' leadership lease (leader.lua)
-- ARGV: [1] worker id  [2] session id  [3] max tasks  [4] scan limit  [5] ack timeout ms
--       [6] request TTL ms  [7] events max length  [8] claiming master id ('' when not a master)
--       [9] its leadership epoch
-- Returns JSON: {r="OK", tasks=[{id, epoch, attempt, gpu_ids, spec}], queued=<tasks left in the queue>}
--            or {r="UNKNOWN_WORKER"} / {r="WRONG_SESSION"} / {r="NOT_LIVE"} / {r="NOT_LEADER"}
EVENTS_MAXLEN = tonumber(ARGV[7])
local K_REQUEST = KEYS[CORE_KEYS + 1]
local previous = redis.call('GET', K_REQUEST)
if previous then return previous end

local id, session = ARGV[1], ARGV[2]
local max_tasks, scan_limit = tonumber(ARGV[3]), tonumber(ARGV[4])
local ack_timeout, request_ttl = tonumber(ARGV[5]), tonumber(ARGV[6])
local w = load_worker(id)
if not w then return reply({r = 'UNKNOWN_WORKER'}) end
if w.session ~= session then return reply({r = 'WRONG_SESSION', session = w.session}) end
local now_ms, now_us = now_parts()
if not check_leader(KEYS[CORE_KEYS + 2], ARGV[8], ARGV[9], now_ms) then return reply({r = 'NOT_LEADER'}) end
if w.liveness_deadline <= now_ms then return reply({r = 'NOT_LIVE'}) end

local K_RES = res_key(id)
local cpu, mem, gpus = free_capacity(w)
local out = {r = 'OK', tasks = {}}
local candidates = redis.call('ZRANGE', K_QUEUE, 0, scan_limit - 1)
for _, task_id in ipairs(candidates) do
  if #out.tasks >= max_tasks or cpu <= 0 then break end
  local st = load_task(task_id)
  if not st or st.state ~= 'QUEUED' then
    -- A queue entry without a queued task is left over from a bug or a manual edit: repair it.
    redis.call('ZREM', K_QUEUE, task_id)
  else
    local fits = st.cpu <= cpu and st.mem <= mem and st.gpus <= #gpus
    if fits then
      for k, v in pairs(st.selector) do
        if w.labels[k] ~= v then fits = false break end
      end
    end
    if fits then
      local taken = {}
      for i = 1, st.gpus do taken[i] = table.remove(gpus, 1) end
      cpu, mem = cpu - st.cpu, mem - st.mem
      st.epoch = next_epoch(now_us)
      st.attempt = st.attempt + 1
      st.worker, st.session = id, session
      st.gpu_ids = table.concat(taken, ',')
      st.deadline = now_ms + ack_timeout
      local err = transition(st, 'ASSIGNED', now_ms, 'claimed by ' .. id, 'claim')
      if err then return err end
      save_task(st)
      redis.call('ZREM', K_QUEUE, task_id)
      redis.call('ZADD', K_DEADLINES, st.deadline, task_id)
      redis.call('HSET', K_RES, task_id, res_value(st))
      out.tasks[#out.tasks + 1] = {id = task_id, epoch = st.epoch, attempt = st.attempt, cpu = st.cpu, mem = st.mem,
                                   gpu_ids = st.gpu_ids, spec = redis.call('HGET', K_SPECS, task_id) or '{}'}
    end
  end
end
out.queued = redis.call('ZCARD', K_QUEUE)
local answer = reply(out)
if #out.tasks > 0 then redis.call('SET', K_REQUEST, answer, 'PX', request_ttl) end
return answer
