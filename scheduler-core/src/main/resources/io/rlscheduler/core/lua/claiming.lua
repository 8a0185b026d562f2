-- claiming.lua: the claim, as a function, for claim.lua and submit_claim.lua; loaded after lib.lua.
-- claim_run(k_request, k_leader, a): KEYS as claim.lua's KEYS[18] and KEYS[19]; ARGV from index a
-- as claim.lua's ARGV from 1. Returns the reply string (or an error reply) exactly as claim.lua.
local function claim_run(k_request, k_leader, a)
  EVENTS_MAXLEN = ARGV[a + 4]
  local K_REQUEST = k_request
  local previous = redis.call('GET', K_REQUEST)
  if previous then return previous end

  local max_tasks, scan_limit = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local ack_timeout, request_ttl = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
  local now_ms, now_us = now_parts()
  if not check_leader(k_leader, ARGV[a + 5], ARGV[a + 6], now_ms) then return reply({r = 'NOT_LEADER'}) end

  -- The head of the queue, read for the first worker and again after a worker changed it; entries
  -- assigned or repaired are set to false.
  local candidates = nil
  local left = 0
  local assigned_any = false
  -- Set when a worker took or repaired entries: the next worker reads the head again, so it also
  -- sees the tasks behind those that nobody could take (say, GPU tasks waiting for busy GPUs).
  local stale = false

  -- Epochs of this run: max(last + 1, now in us) for the first, then one more each; the counter is
  -- written once at the end (and before an error answer: epochs handed out never repeat).
  local last_epoch = nil
  local function take_epoch()
    if last_epoch == nil then
      last_epoch = math.max(tonumber(redis.call('GET', K_EPOCH) or '0') + 1, now_us) - 1
    end
    last_epoch = last_epoch + 1
    return fmt(last_epoch)
  end

  -- Set when parked tasks came back to the queue after the head was read (a recount of the shapes).
  local refilled = false

  local function load_candidates()
    candidates = redis.call('ZRANGEBYSCORE', K_QUEUE, '-inf', CLAIMABLE_MAX, 'LIMIT', 0, scan_limit)
    left = #candidates
    refilled = false
  end

  -- Whether a task that does not fit the worker at hand could run on any registered worker; the
  -- shapes are read once per run, and only when some task did not fit. A task that could not is
  -- parked (parking.lua), so that it no longer takes one of the scan_limit places.
  local shapes, own_shape = nil, {}
  local function runnable_anywhere(st, w)
    local own = own_shape[w.id]
    if own == nil then
      own = decode_shape(shape_of(w))
      own_shape[w.id] = own
    end
    if fits_shape(st, own) then return true end
    if shapes == nil then
      local rebuilt
      shapes, rebuilt = registered_shapes()
      if rebuilt and unpark(shapes, 'the registered workers\' shapes were counted again', now_ms) > 0 then
        stale = true
        refilled = true
      end
    end
    return fits_any(st, shapes)
  end

  local function claim_for(id, session)
    if candidates ~= nil and left == 0 and #candidates < scan_limit and not refilled then
      -- The queue ran dry for the workers before this one: nothing to assign, so its record is not
      -- even read (a round over many workers costs little once the work is handed out). Unless
      -- parked tasks came back to the queue since it was read (refilled).
      return {r = 'OK', tasks = {}}
    end
    local w = load_worker(id)
    if not w then return {r = 'UNKNOWN_WORKER'} end
    if w.session ~= session then return {r = 'WRONG_SESSION', session = w.session} end
    if w.liveness_deadline <= now_ms then return {r = 'NOT_LIVE'} end
    local out = {r = 'OK', tasks = {}}
    if candidates == nil or stale then
      -- First worker, or earlier workers changed the head of the queue: read it (again).
      load_candidates()
      stale = false
    end
    if left == 0 then return out end
    local K_RES = res_key(id)
    local cpu, mem, gpus = free_capacity(w)
    for i, task_id in ipairs(candidates) do
      if #out.tasks >= max_tasks or cpu <= 0 or left == 0 then break end
      if task_id then
        local st = load_task(task_id)
        if not st or st.state ~= 'QUEUED' then
          -- A queue entry without a queued task is left over from a bug or a manual edit: repair it.
          redis.call('ZREM', K_QUEUE, task_id)
          candidates[i] = false
          left = left - 1
          stale = true
        else
          local need_cpu, need_mem, need_gpus = tonumber(st.cpu), tonumber(st.mem), tonumber(st.gpus)
          local fits = need_cpu <= cpu and need_mem <= mem and need_gpus <= #gpus
          if fits then
            for k, v in pairs(st.selector) do
              if w.labels[k] ~= v then fits = false break end
            end
          end
          if not fits and not runnable_anywhere(st, w) then
            park(st, now_ms)
            candidates[i] = false
            left = left - 1
            stale = true
          elseif fits then
            local taken = {}
            for g = 1, need_gpus do taken[g] = table.remove(gpus, 1) end
            cpu, mem = cpu - need_cpu, mem - need_mem
            st.epoch = take_epoch()
            st.attempt = fmt(tonumber(st.attempt) + 1)
            st.worker, st.session = id, session
            st.gpu_ids = table.concat(taken, ',')
            st.deadline = fmt(now_ms + ack_timeout)
            local err = transition(st, 'ASSIGNED', now_ms, 'claimed by ' .. id, 'claim')
            if err then return err end
            save_task(st)
            redis.call('ZREM', K_QUEUE, task_id)
            redis.call('ZADD', K_DEADLINES, st.deadline, task_id)
            redis.call('HSET', K_RES, task_id, res_value(st))
            -- spec: filled in for all assignments of the run with one HMGET at its end
            out.tasks[#out.tasks + 1] = {id = task_id, epoch = st.epoch, attempt = st.attempt, cpu = st.cpu, mem = st.mem,
                                         gpu_ids = st.gpu_ids}
            candidates[i] = false
            left = left - 1
            assigned_any = true
            stale = true
          end
        end
      end
    end
    return out
  end

  local answers = {}
  for i = a + 7, #ARGV, 2 do
    local answer = claim_for(ARGV[i], ARGV[i + 1])
    if answer.err then
      if last_epoch ~= nil then redis.call('SET', K_EPOCH, fmt(last_epoch)) end
      return answer
    end
    answers[#answers + 1] = answer
  end
  if last_epoch ~= nil then redis.call('SET', K_EPOCH, fmt(last_epoch)) end
  if assigned_any then
    local given, ids = {}, {}
    for _, answer in ipairs(answers) do
      if answer.tasks then
        for _, t in ipairs(answer.tasks) do
          given[#given + 1] = t
          ids[#ids + 1] = t.id
        end
      end
    end
    local specs = redis.call('HMGET', K_SPECS, unpack(ids))
    for i, t in ipairs(given) do t.spec = specs[i] or '{}' end
  end
  local out = {r = 'OK', workers = answers, queued = redis.call('ZCOUNT', K_QUEUE, '-inf', CLAIMABLE_MAX)}
  local answer = reply(out)
  if assigned_any then redis.call('SET', K_REQUEST, answer, 'PX', request_ttl) end
  return answer
end
