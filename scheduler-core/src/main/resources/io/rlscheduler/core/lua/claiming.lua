-- claiming.lua: the claim, as a function, for claim.lua and submit_claim.lua; loaded after lib.lua.
-- claim_run(k_request, k_leader, a): KEYS as claim.lua's KEYS[18] and KEYS[19]; ARGV from index a
-- as claim.lua's ARGV from 1. Returns the reply string (or an error reply) exactly as claim.lua.
local function claim_run(k_request, k_leader, a)
  local sh = sharing()
  local K_TIERS, fair_key, owner_queue, limits_of, counter, at_limit, owner_dequeue =
      sh.K_TIERS, sh.fair_key, sh.owner_queue, sh.limits_of, sh.counter, sh.at_limit, sh.owner_dequeue
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
  -- Whether w could run the task when idle (its shape, read once per run).
  local function could_run(st, w)
    local own = own_shape[w.id]
    if own == nil then
      own = decode_shape(shape_of(w))
      own_shape[w.id] = own
    end
    return fits_shape(st, own)
  end
  local function runnable_anywhere(st, w)
    if could_run(st, w) then return true end
    if shapes == nil then
      local rebuilt
      shapes, rebuilt = registered_shapes()
      if rebuilt and unpark(shapes, 'the registered workers\' shapes were counted again', now_ms) > 0 then
        refilled = true
      end
    end
    return fits_any(st, shapes)
  end

  -- The fair order as this run sees it: per priority, highest first, the owners of its fair sets
  -- (up to owner_scan of each kind) with their usage per share, read once per run and kept up to
  -- date here as the run assigns; the sets themselves are written once, when the run ends
  -- (lib.lua's flush_owners). Entries: {owner, score, g = reads GPU tasks, c = reads the others,
  -- dead = at a limit that stops it}.
  local owner_scan = math.max(16, per_owner)
  local order = nil
  local function load_order()
    order = {}
    for _, p in ipairs(redis.call('ZRANGE', K_TIERS, 0, -1)) do
      local og = redis.call('ZRANGE', fair_key('g', p), 0, owner_scan - 1, 'WITHSCORES')
      local oc = redis.call('ZRANGE', fair_key('c', p), 0, owner_scan - 1, 'WITHSCORES')
      if #og == 0 and #oc == 0 then
        redis.call('ZREM', K_TIERS, p)
      else
        local list, by = {}, {}
        local function add(found, kind)
          for i = 1, #found, 2 do
            local e = by[found[i]]
            if not e then
              e = {owner = found[i], score = tonumber(found[i + 1])}
              by[found[i]] = e
              list[#list + 1] = e
            end
            e[kind] = true
          end
        end
        add(og, 'g')
        add(oc, 'c')
        order[#order + 1] = {p = p, owners = list, lo = fmt((999 - tonumber(p)) * 1e12),
                             hi = '(' .. fmt((1000 - tonumber(p)) * 1e12)}
      end
    end
  end
  local function by_score(x, y)
    if x.score ~= y.score then return x.score < y.score end
    return x.owner < y.owner
  end

  -- An assignment changed its owner's usage and what it holds (lib.lua's counters, as this run
  -- left them): its place in every priority's order, and whether a limit now stops it.
  local function assigned(st)
    local h = {gpus = counter(st.owner, 'gpus'), running = counter(st.owner, 'running')}
    local l = limits_of(st.owner)
    local score = counter(st.owner, 'usage') / l.weight
    for _, tier in ipairs(order) do
      for _, e in ipairs(tier.owners) do
        if e.owner == st.owner then
          e.score = score
          if at_limit(l, 'c', h.gpus, h.running) then e.dead = true end
          if at_limit(l, 'g', h.gpus, h.running) then e.g = false end
        end
      end
      if #tier.owners > 1 then table.sort(tier.owners, by_score) end
    end
  end

  -- An owner's claimable tasks of one kind at a tier, per_owner from depth * per_owner on, as
  -- {task id, queue score, kind} in order, and whether the slice was full (more may follow). The
  -- first slice is kept for the run (the run's own assignments are taken out of it: taken), so
  -- that a run of many assignments reads each owner's queue once per per_owner tasks.
  local KINDS = {'g', 'c'}
  local function by_queue_score(x, y) return x[2] < y[2] end
  local function slice(e, kind, tier, depth)
    if depth == 0 and e.slice and e.slice[kind] then return e.slice[kind] end
    local r = redis.call('ZRANGEBYSCORE', owner_queue(e.owner, kind), tier.lo, tier.hi, 'WITHSCORES', 'LIMIT',
                         depth * per_owner, per_owner)
    local sl = {full = #r == 2 * per_owner}
    for i = 1, #r, 2 do sl[#sl + 1] = {r[i], tonumber(r[i + 1]), kind} end
    if depth == 0 then
      e.slice = e.slice or {}
      e.slice[kind] = sl
    end
    return sl
  end
  -- A task assigned outside pick (a reservation's): out of its owner's slices read by this run.
  local function forget(st)
    for _, tier in ipairs(order or {}) do
      for _, e in ipairs(tier.owners) do
        if e.owner == st.owner and e.slice then
          for kind, sl in pairs(e.slice) do
            for i = #sl, 1, -1 do
              if sl[i][1] == st.id then table.remove(sl, i) end
            end
            if #sl == 0 and sl.full then e.slice[kind] = nil end
          end
        end
      end
    end
  end
  local function taken(e, c)
    local sl = e.slice and e.slice[c[3]]
    if not sl then return end
    for i = 1, #sl do
      if sl[i] == c then
        table.remove(sl, i)
        break
      end
    end
    -- Emptied but there may be more: read again next time.
    if #sl == 0 and sl.full then e.slice[c[3]] = nil end
  end

  -- Reservations (lib.lua's sharing: reserved, reserve, unreserve). A worker that holds one
  -- takes, while the reserved task does not fit, only work that leaves free what the task needs
  -- (beside); the task is the first it takes once it fits. A worker without one is offered the
  -- longest-waiting big task past reserve_after that it could run, has no reservation, and whose
  -- owner holds none and may take it now. A reservation whose worker is no longer live, or whose
  -- task is no longer queued or its owner at a limit, is ended.
  local function beside(hold, need_cpu, need_mem, need_gpus, cpu, mem, free_gpus)
    return (need_gpus == 0 or free_gpus - need_gpus >= hold.gpus)
        and (need_cpu == 0 or cpu - need_cpu >= hold.cpu)
        and (need_mem == 0 or mem - need_mem >= hold.mem)
  end
  local function owner_may(st)
    local l = limits_of(st.owner)
    local need = tonumber(st.gpus)
    return not (l.max_gpus ~= nil and counter(st.owner, 'gpus') + need > l.max_gpus)
        and not (l.max_gpus_per_task ~= nil and need > l.max_gpus_per_task)
        and not (l.max_running ~= nil and counter(st.owner, 'running') >= l.max_running)
  end
  local candidates = nil
  -- Returns the task reserved for w, or one to reserve for it (and true), or nil.
  local function reservation_for(w)
    local r = sh.reserved()
    local task_id = r.worker[w.id]
    if task_id then
      local st = load_task(task_id)
      if st and st.state == 'QUEUED' and st.reserved_on == w.id and owner_may(st) and could_run(st, w) then
        return st
      end
      sh.unreserve_worker(w.id)
      return nil
    end
    if candidates == nil then
      -- The owners whose oldest big task waited past reserve_after, oldest first (at most 64), each
      -- with that task: one owner's long sweep of big tasks cannot hide another's.
      candidates = {}
      local after = sh.fair_config(now_ms).reserve_after
      if after > 0 then
        for _, owner in ipairs(redis.call('ZRANGEBYSCORE', sh.K_BIG, '-inf', now_ms - after, 'LIMIT', 0, 64)) do
          candidates[#candidates + 1] = {owner = owner}
        end
      end
    end
    for _, c in ipairs(candidates) do
      if c.id == nil and not r.owner[c.owner] then
        c.id = redis.call('ZRANGE', sh.big_key(c.owner), 0, 0)[1] or false
      end
      local id = c.id or ''
      local holder = r.task[id]
      if holder and holder ~= w.id then
        local deadline = tonumber(redis.call('ZSCORE', K_LIVENESS, holder) or '0')
        if deadline <= now_ms then
          sh.unreserve_worker(holder)
          holder = nil
        end
      end
      if not holder and not r.owner[c.owner] and c.id then
        local st = load_task(id)
        if st and st.state == 'QUEUED' and not r.owner[st.owner] and could_run(st, w) and owner_may(st) then
          return st, true
        end
      end
    end
    return nil
  end

  -- One pass over the fair order for worker w with the capacity it has left: returns the first
  -- task that fits it, or nil. Reads each owner's tasks per_owner at a time (those needing GPUs
  -- and those needing none merged in submit order; a worker without a free GPU reads none that
  -- needs one), every owner's first slice before anyone's second. Parks what no registered
  -- worker could run, and drops queue entries left without a queued task (a bug or a manual
  -- edit), and then ends at once: budget.changed tells the caller to start a new pass.
  -- budget.left counts the tasks it may still examine.
  local function pick(w, cpu, mem, gpus, budget, hold)
    if order == nil then load_order() end
    local any = false
    for _, tier in ipairs(order) do
      local depth = 0
      while true do
        local more = false
        for _, e in ipairs(tier.owners) do
          local owner = e.owner
          if not e.dead and (e.g or e.c) then
            local l = limits_of(owner)
            -- The slices of the kinds read, merged in submit order (one kind: the slice itself).
            local ids, merged = nil, false
            for _, kind in ipairs(KINDS) do
              if e[kind] and (kind == 'c' or #gpus > 0) then
                local sl = slice(e, kind, tier, depth)
                if sl.full then more = true end
                if #sl == 0 and depth == 0 and not sl.full then e[kind] = false end -- none left at this priority
                if ids == nil then
                  ids = sl
                elseif #sl > 0 then
                  local both = {}
                  for i = 1, #ids do both[i] = ids[i] end
                  for i = 1, #sl do both[#both + 1] = sl[i] end
                  ids, merged = both, true
                end
              end
            end
            ids = ids or {}
            -- Work is left for the run's later workers while some owner has tasks read, or GPU
            -- tasks this worker did not read.
            if #ids > 0 or (e.g and #gpus == 0) then any = true end
            if merged then table.sort(ids, by_queue_score) end
            for _, c in ipairs(ids) do
              if budget.left <= 0 then return nil end
              budget.left = budget.left - 1
              local task_id = c[1]
              local st = load_task(task_id)
              if not st or st.state ~= 'QUEUED' then
                redis.call('ZREM', K_QUEUE, task_id)
                if st then owner_dequeue(st) else redis.call('ZREM', owner_queue(owner, c[3]), task_id) end
                budget.changed = true
                order = nil
                return nil -- the queues moved under the slices read: a new pass reads them again
              end
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
                order = nil
                return nil -- as above
              elseif fits and not (l.max_gpus ~= nil and counter(owner, 'gpus') + need_gpus > l.max_gpus)
                  and not (l.max_running ~= nil and counter(owner, 'running') >= l.max_running)
                  and not (l.max_gpus_per_task ~= nil and need_gpus > l.max_gpus_per_task)
                  and (hold == nil or beside(hold, need_cpu, need_mem, need_gpus, cpu, mem, #gpus)) then
                if depth == 0 then taken(e, c) end
                return st
              end
            end
          end
        end
        if not more or budget.left <= 0 then break end
        depth = depth + 1
      end
    end
    if not any then dry = true end
    return nil
  end

  local function claim_for(id, session)
    if dry and not refilled and not sh.reserved().worker[id] then return {r = 'OK', tasks = {}} end
    local w = load_worker(id)
    if not w then return {r = 'UNKNOWN_WORKER'} end
    if w.session ~= session then return {r = 'WRONG_SESSION', session = w.session} end
    if liveness_of(id) <= now_ms then return {r = 'NOT_LIVE'} end
    local out = {r = 'OK', tasks = {}}
    if refilled then order = nil end -- parked tasks came back: read the order again
    dry, refilled = false, false
    local K_RES = res_key(id)
    local cpu, mem, gpus = free_capacity(w)
    local function assign(st)
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
      assigned(st)
      return nil
    end
    -- A worker may hold a reservation, or be given one when it has a free GPU.
    local hold = nil
    if sh.reserved().worker[id] or (#gpus > 0 and sh.fair_config(now_ms).reserve_after > 0) then
      local r, new = reservation_for(w)
      if r then
        local fits = tonumber(r.cpu) <= cpu and tonumber(r.mem) <= mem and tonumber(r.gpus) <= #gpus
        if fits then
          if order == nil then load_order() end
          local err = assign(r)
          if err then return err end
          forget(r)
        else
          if new then
            sh.reserve(r, id, now_ms)
            save_task(r)
            task_notice(r, 'reserved ' .. id .. ': it waited longer than reserve_after; ' .. id
                .. ' takes no new work that would keep it from starting there', 'reserve', now_ms)
          end
          hold = {cpu = tonumber(r.cpu), mem = tonumber(r.mem), gpus = tonumber(r.gpus)}
        end
      end
    end
    local budget = {left = scan_limit, changed = false}
    while #out.tasks < max_tasks and cpu > 0 and budget.left > 0 do
      budget.changed = false
      local st = pick(w, cpu, mem, gpus, budget, hold)
      if st then
        local err = assign(st)
        if err then return err end
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
