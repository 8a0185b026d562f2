-- workers.lua (read-only): every worker with its state derived by the Redis clock, as the table:
--   IDLE    liveness valid, no task          RUNNING  liveness valid, >= 1 task
--   PENDING liveness lost, a task lease valid DOWN    liveness lost, no valid task lease
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: none
-- Returns JSON: {r="OK", now=ms, workers=[{id, session, labels, state, cpu, mem, gpus, free_cpu,
--               free_mem, free_gpus, tasks=[{id, epoch}], heartbeat_at, liveness_deadline}]}
local now_ms = now_parts()
local out = {r = 'OK', now = now_ms, workers = {}}
local all = redis.call('HGETALL', K_WORKERS)
local deadlines, beats = {}, {}
local z = redis.call('ZRANGE', K_LIVENESS, 0, -1, 'WITHSCORES')
for i = 1, #z, 2 do deadlines[z[i]] = tonumber(z[i + 1]) end
local b = redis.call('HGETALL', K_BEATS)
for i = 1, #b, 2 do beats[b[i]] = tonumber(string.match(b[i + 1], '|(%d+)$')) end
for i = 1, #all, 2 do
  local w = cjson.decode(all[i + 1])
  local liveness_deadline = deadlines[w.id] or 0
  local live = liveness_deadline > now_ms
  local held, lease_valid = {}, false
  local res = reservations(w.id)
  for task_id, r in pairs(res) do
    held[#held + 1] = {id = task_id, epoch = r.e}
    local st = load_task(task_id)
    if st and st.epoch == r.e and tonumber(st.deadline) > now_ms then lease_valid = true end
  end
  local state
  if live then state = (#held == 0) and 'IDLE' or 'RUNNING'
  elseif lease_valid then state = 'PENDING'
  else state = 'DOWN' end
  local cpu, mem, gpus = free_capacity(w, res)
  out.workers[#out.workers + 1] = {
    id = w.id, session = w.session, labels = w.labels, state = state,
    cpu = w.cpu, mem = w.mem, gpus = w.gpus, free_cpu = cpu, free_mem = mem,
    free_gpus = table.concat(gpus, ','), tasks = held,
    heartbeat_at = beats[w.id] or w.heartbeat_at or 0, liveness_deadline = liveness_deadline
  }
end
return reply(out)
