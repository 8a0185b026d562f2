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

  -- Claims serve owners in fair order (lib.lua, "Sharing between owners"): priorities highest
  -- first; within one, the owners not at a limit by their usage per share, least first; within an
  -- owner, its tasks in submit order. Every assignment charges its owner at once, so the next pick
  -- (for the same worker or the next one of this run) already sees it. A worker examines at most
  -- scan_limit tasks, at most per_owner of each owner at a time, so an owner whose first tasks fit
  -- nowhere free cannot hide the others' tasks, and neither the queue's length nor the number of
  -- owners at a limit (they are in no fair set) adds to a claim's cost.
  local per_owner = math.max(1, math.floor(scan_limit / 10))
  -- Set when a pass found no owner with claimable tasks: the workers after it are answered
  -- without reading their records, unless parked tasks came back since (refilled).
  local dry, refilled = false, false
  local assigned_any = false

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

  -- Whether a task that does not fit the worker at hand could run on any registered worker; the
  -- shapes are read once per run, and only when some task did not fit. A task that could not is
  -- parked (parking.lua), so that it no longer takes a place among those a claim examines.
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
        refilled = true
      end
    end
    return fits_any(st, shapes)
  end

  -- One pass over the fair order for worker w with the capacity it has left: returns the first
  -- task that fits it, or nil. Reads each owner's tasks per_owner at a time (those needing GPUs
  -- and those needing none merged in submit order), every owner's first slice before anyone's
  -- second. Parks what no registered worker could run, and drops queue entries left without a
  -- queued task (a bug or a manual edit), and then ends at once: budget.changed tells the caller
  -- to start a new pass. budget.left counts the tasks it may still examine.
  local function pick(w, cpu, mem, gpus, budget)
    local any = false
    for _, p in ipairs(redis.call('ZRANGE', K_TIERS, 0, -1)) do
      local og = redis.call('ZRANGE', fair_key('g', p), 0, per_owner - 1, 'WITHSCORES')
      local oc = redis.call('ZRANGE', fair_key('c', p), 0, per_owner - 1, 'WITHSCORES')
      if #og == 0 and #oc == 0 then
        redis.call('ZREM', K_TIERS, p)
      else
        any = true
        local owners, kinds = {}, {}
        local function add(list, kind)
          for i = 1, #list, 2 do
            local o = list[i]
            if not kinds[o] then
              kinds[o] = {}
              owners[#owners + 1] = {o, tonumber(list[i + 1])}
            end
            kinds[o][kind] = true
          end
        end
        -- A worker without a free GPU reads no task that needs one.
        if #gpus > 0 then add(og, 'g') end
        add(oc, 'c')
        table.sort(owners, function(x, y)
          if x[2] ~= y[2] then return x[2] < y[2] end
          return x[1] < y[1]
        end)
        local lo, hi = fmt((999 - tonumber(p)) * 1e12), '(' .. fmt((1000 - tonumber(p)) * 1e12)
        local depth = 0
        while true do
          local more = false
          for _, entry in ipairs(owners) do
            local owner = entry[1]
            local l = limits_of(owner)
            local held = nil
            local ids = {}
            for _, kind in ipairs({'g', 'c'}) do
              if kinds[owner][kind] then
                local r = redis.call('ZRANGEBYSCORE', owner_queue(owner, kind), lo, hi, 'WITHSCORES', 'LIMIT',
                                     depth * per_owner, per_owner)
                if #r == 2 * per_owner then more = true end
                for i = 1, #r, 2 do ids[#ids + 1] = {r[i], tonumber(r[i + 1]), kind} end
              end
            end
            table.sort(ids, function(x, y) return x[2] < y[2] end)
            for _, c in ipairs(ids) do
              if budget.left <= 0 then return nil end
              budget.left = budget.left - 1
              local task_id = c[1]
              local st = load_task(task_id)
              if not st or st.state ~= 'QUEUED' then
                redis.call('ZREM', K_QUEUE, task_id)
                if st then owner_dequeue(st) else redis.call('ZREM', owner_queue(owner, c[3]), task_id) end
                budget.changed = true
                return nil -- the queues moved under the slices read: a new pass reads them again
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
                  budget.changed = true
                  return nil -- as above
                elseif fits then
                  if held == nil then held = tonumber(redis.call('HGET', owner_key(owner), 'gpus') or '0') end
                  if not (l.max_gpus ~= nil and held + need_gpus > l.max_gpus)
                      and not (l.max_gpus_per_task ~= nil and need_gpus > l.max_gpus_per_task) then
                    return st
                  end
                end
              end
            end
          end
          if not more or budget.left <= 0 then break end
          depth = depth + 1
        end
      end
    end
    if not any then dry = true end
    return nil
  end

  local function claim_for(id, session)
    if dry and not refilled then return {r = 'OK', tasks = {}} end
    local w = load_worker(id)
    if not w then return {r = 'UNKNOWN_WORKER'} end
    if w.session ~= session then return {r = 'WRONG_SESSION', session = w.session} end
    if w.liveness_deadline <= now_ms then return {r = 'NOT_LIVE'} end
    local out = {r = 'OK', tasks = {}}
    dry, refilled = false, false
    local K_RES = res_key(id)
    local cpu, mem, gpus = free_capacity(w)
    local budget = {left = scan_limit, changed = false}
    while #out.tasks < max_tasks and cpu > 0 and budget.left > 0 do
      budget.changed = false
      local st = pick(w, cpu, mem, gpus, budget)
      if st then
        local need_gpus = tonumber(st.gpus)
        local taken = {}
        for g = 1, need_gpus do taken[g] = table.remove(gpus, 1) end
        cpu, mem = cpu - tonumber(st.cpu), mem - tonumber(st.mem)
        st.epoch = take_epoch()
        st.attempt = fmt(tonumber(st.attempt) + 1)
        st.worker, st.session = id, session
        st.gpu_ids = table.concat(taken, ',')
        st.deadline = fmt(now_ms + ack_timeout)
        local err = transition(st, 'ASSIGNED', now_ms, 'claimed by ' .. id, 'claim')
        if err then return err end
        save_task(st)
        redis.call('ZADD', K_DEADLINES, st.deadline, st.id)
        redis.call('HSET', K_RES, st.id, res_value(st))
        -- spec: filled in for all assignments of the run with one HMGET at its end
        out.tasks[#out.tasks + 1] = {id = st.id, epoch = st.epoch, attempt = st.attempt, cpu = st.cpu, mem = st.mem,
                                     gpu_ids = st.gpu_ids}
        assigned_any = true
      elseif not budget.changed then
        break
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
