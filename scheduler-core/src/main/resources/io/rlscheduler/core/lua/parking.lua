-- parking.lua: parked tasks and worker shapes, as functions, for claiming.lua, register.lua and
-- remove_worker.lua; loaded after lib.lua (and before claiming.lua).

-- Parking. A queued task that no registered worker could ever run (more CPU slots, memory or
-- GPUs than any has in all, or labels none has) would hold a place among the first scan_limit
-- tasks that a claim looks at for as long as it waits: enough of them, and the queue behind them
-- stalls. A claim that meets such a task parks it: it stays QUEUED, in the queue, but its score
-- moves up by PARK_OFFSET, past every claimable score ((999 - priority) * 1e12 + seq stays below
-- 1e15), and it leaves its owner's queue of claimable tasks (lib.lua), so claims no longer see
-- it, and it keeps its order among the parked. A worker that registers with a shape no registered worker had
-- brings the parked tasks that fit it back to their place (unpark). Listings, cancel and the
-- queue's length see parked tasks as queued tasks.
local PARK_OFFSET = 1e15
local CLAIMABLE_MAX = '(1000000000000000'  -- as a ZRANGEBYSCORE/ZCOUNT bound: below PARK_OFFSET
local PARKED_MIN = '1000000000000000'

-- A worker's shape: what it has in all (CPU slots, memory, the number of its GPUs) and its labels,
-- as text that is equal for equal shapes (labels sorted by name).
local function shape_of(w)
  local names = {}
  for k in pairs(w.labels) do names[#names + 1] = k end
  table.sort(names)
  local labels = {}
  for i, k in ipairs(names) do labels[i] = {k, w.labels[k]} end
  return cjson.encode({fmt(w.cpu), fmt(w.mem), fmt(#split_ids(w.gpus)), labels})
end

local function decode_shape(text)
  local s = cjson.decode(text)
  local labels = {}
  for _, pair in ipairs(s[4]) do labels[pair[1]] = pair[2] end
  return {cpu = tonumber(s[1]), mem = tonumber(s[2]), gpus = tonumber(s[3]), labels = labels}
end

-- Counts a worker in (delta 1) or out (-1) of its shape; returns the shape's new count.
local function count_shape(shape, delta)
  local n = redis.call('HINCRBY', K_SHAPES, shape, delta)
  if n <= 0 then redis.call('HDEL', K_SHAPES, shape) end
  return n
end

-- Whether a worker of shape s could run the task when it runs nothing else.
local function fits_shape(st, s)
  if tonumber(st.cpu) > s.cpu or tonumber(st.mem) > s.mem or tonumber(st.gpus) > s.gpus then return false end
  for k, v in pairs(st.selector) do
    if s.labels[k] ~= v then return false end
  end
  return true
end

local function fits_any(st, shapes)
  for _, s in ipairs(shapes) do
    if fits_shape(st, s) then return true end
  end
  return false
end

-- The shapes of all registered workers. K_SHAPES is derived from the worker records and kept by
-- register and remove_worker; should its counts not add up to the number of registered workers
-- (the key was lost or edited by hand), it is rebuilt from the worker records first (O(workers),
-- once), and `rebuilt` is true, so that no task is parked by counts that miss a worker. A count
-- under the wrong shape with the total right is repaired by that worker's next registration
-- (register.lua).
local function registered_shapes()
  local all = redis.call('HGETALL', K_SHAPES)
  local counted = 0
  for i = 2, #all, 2 do counted = counted + tonumber(all[i]) end
  local rebuilt = false
  if counted ~= redis.call('HLEN', K_WORKERS) then
    redis.call('DEL', K_SHAPES)
    for _, raw in ipairs(redis.call('HVALS', K_WORKERS)) do
      count_shape(shape_of(cjson.decode(raw)), 1)
    end
    all = redis.call('HGETALL', K_SHAPES)
    rebuilt = true
  end
  local shapes = {}
  for i = 1, #all, 2 do shapes[#shapes + 1] = decode_shape(all[i]) end
  return shapes, rebuilt
end

-- A task event that is not a transition (parked, unparked): written at once, like emit's.
local function task_notice(st, reason, via, now_ms)
  emit('task', {task = st.id, from = st.state, to = st.state, epoch = st.epoch, worker = st.worker or '',
                attempt = st.attempt, reason = reason, via = via, at = now_ms})
end

local function park(st, now_ms)
  redis.call('ZADD', K_QUEUE, fmt(PARK_OFFSET + queue_score(st)), st.id)
  sharing().owner_dequeue(st)
  st.reason = 'parked: no registered worker has the CPU slots, memory, GPUs and labels it asks for; it waits'
      .. ' out of the claims\' sight until such a worker registers'
  st.updated_at = ms_text(now_ms)
  save_task(st)
  task_notice(st, st.reason, 'park', now_ms)
end

-- Brings the parked tasks that fit one of `shapes` back to their place in the queue; drops parked
-- entries whose task is no longer queued. Returns how many came back. O(parked tasks).
local function unpark(shapes, why, now_ms)
  local back = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_QUEUE, PARKED_MIN, '+inf')) do
    local st = load_task(id)
    if not st or st.state ~= 'QUEUED' then
      redis.call('ZREM', K_QUEUE, id)
    elseif fits_any(st, shapes) then
      redis.call('ZADD', K_QUEUE, fmt(queue_score(st)), id)
      sharing().owner_enqueue(st, now_ms)
      st.reason = 'back in the queue: ' .. why
      st.updated_at = ms_text(now_ms)
      save_task(st)
      task_notice(st, st.reason, 'unpark', now_ms)
      back = back + 1
    end
  end
  return back
end
