-- owners_repair.lua: the repair pass of the sharing between owners (lib.lua, "Sharing between
-- owners"). The counters, owner queues, fair sets and reservations are kept by the scripts that
-- move tasks, so they never drift by themselves; this rebuilds them from the task records when
-- they disagree anyway (a bug, a hand edit, data written by a version without owner queues) and
-- returns each correction. What workers hold (gpus, running) is counted from the ASSIGNED and
-- RUNNING tasks, always; what waits (queued, the claimable counts per kind and priority, the owner
-- queues, the queue of big tasks) from the queue, when it holds at most ARGV[1] entries (a longer
-- queue would hold Redis too long in one run: queue_checked=false says it was left alone).
-- Reservations whose task is not queued or whose worker is not registered are ended.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] the longest queue whose side is checked  [2] events max length
-- Returns JSON {r="OK", fixed=[{owner, field, was, now}], queue_checked, tasks_checked}
-- libraries: parking
EVENTS_MAXLEN = ARGV[2]
local now_ms = now_parts()
local sh = sharing()
local max_queue = tonumber(ARGV[1])
local want = {}   -- owner -> field -> expected value
local function expect(owner, field, delta)
  local w = want[owner]
  if not w then
    w = {}
    want[owner] = w
  end
  w[field] = (w[field] or 0) + delta
end
local checked = 0
for _, state in ipairs({'ASSIGNED', 'RUNNING'}) do
  for _, id in ipairs(redis.call('ZRANGE', K_STATE[state], 0, -1)) do
    local st = load_task(id)
    if st and st.state == state then
      expect(st.owner, 'gpus', tonumber(st.gpus))
      expect(st.owner, 'running', 1)
      checked = checked + 1
    end
  end
end
local queue_checked = redis.call('ZCARD', K_QUEUE) <= max_queue
local fixed = {}
local owners = redis.call('SMEMBERS', sh.K_OWNERS)
if queue_checked then
  -- A queued task in its owner's queue but not in the queue itself (a hand edit, a bug) goes back
  -- to the queue first, so that it is counted below and not dropped.
  for _, owner in ipairs(owners) do
    for _, kind in ipairs({'g', 'c'}) do
      for _, id in ipairs(redis.call('ZRANGE', sh.owner_queue(owner, kind), 0, -1)) do
        if not redis.call('ZSCORE', K_QUEUE, id) then
          local st = load_task(id)
          if st and st.state == 'QUEUED' then
            redis.call('ZADD', K_QUEUE, fmt(queue_score(st)), id)
            fixed[#fixed + 1] = {owner = st.owner, field = 'queue', was = 'without ' .. id, now = 'with ' .. id}
          end
        end
      end
    end
  end
  local members = {}  -- owner queue key -> id -> true, for the entries that should be there
  for _, id in ipairs(redis.call('ZRANGE', K_QUEUE, 0, -1, 'WITHSCORES')) do
    members[#members + 1] = id
  end
  local in_queue = {}
  for i = 1, #members, 2 do
    local id, score = members[i], tonumber(members[i + 1])
    local st = load_task(id)
    if st and st.state == 'QUEUED' then
      checked = checked + 1
      expect(st.owner, 'queued', 1)
      if redis.call('SISMEMBER', sh.K_OWNERS, st.owner) == 0 then
        redis.call('SADD', sh.K_OWNERS, st.owner)
        owners[#owners + 1] = st.owner
      end
      if score < PARK_OFFSET then
        local kind = st.gpus ~= '0' and 'g' or 'c'
        local key = sh.owner_queue(st.owner, kind)
        expect(st.owner, 'q:' .. kind .. ':' .. st.priority, 1)
        in_queue[key] = in_queue[key] or {}
        in_queue[key][id] = true
        if not redis.call('ZSCORE', key, id) then
          redis.call('ZADD', key, fmt(queue_score(st)), id)
          fixed[#fixed + 1] = {owner = st.owner, field = 'queue:' .. kind, was = 'without ' .. id, now = 'with ' .. id}
        end
        if tonumber(st.gpus) >= 2 and not redis.call('ZSCORE', sh.big_key(st.owner), id) then
          redis.call('ZADD', sh.big_key(st.owner), fmt(now_ms), id)
        end
      end
    end
  end
  -- Entries of the owner queues and of the big tasks' queue whose task is not claimable.
  for _, owner in ipairs(owners) do
    for _, kind in ipairs({'g', 'c'}) do
      local key = sh.owner_queue(owner, kind)
      local keep = in_queue[key] or {}
      for _, id in ipairs(redis.call('ZRANGE', key, 0, -1)) do
        if not keep[id] then
          redis.call('ZREM', key, id)
          fixed[#fixed + 1] = {owner = owner, field = 'queue:' .. kind, was = 'with ' .. id, now = 'without ' .. id}
        end
      end
    end
  end
  -- Each owner's big tasks, and its place in the owners' queue of big tasks (its oldest).
  for _, owner in ipairs(owners) do
    local key = sh.big_key(owner)
    local claimable = in_queue[sh.owner_queue(owner, 'g')] or {}
    for _, id in ipairs(redis.call('ZRANGE', key, 0, -1)) do
      if not claimable[id] then redis.call('ZREM', key, id) end
    end
    local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    if #first == 0 then
      redis.call('ZREM', sh.K_BIG, owner)
    else
      redis.call('ZADD', sh.K_BIG, first[2], owner)
    end
  end
end
-- The counters: each owner's compared field by field with what the records say.
for _, owner in ipairs(owners) do
  local w = want[owner] or {}
  local have = {}
  local all = redis.call('HGETALL', sh.owner_key(owner))
  for i = 1, #all, 2 do have[all[i]] = tonumber(all[i + 1]) end
  local fields = {gpus = true, running = true}
  if queue_checked then
    fields.queued = true
    for f in pairs(have) do if string.sub(f, 1, 2) == 'q:' then fields[f] = true end end
    for f in pairs(w) do if string.sub(f, 1, 2) == 'q:' then fields[f] = true end end
  end
  local changed = false
  for f in pairs(fields) do
    local expected, was = w[f] or 0, have[f] or 0
    if expected ~= was then
      fixed[#fixed + 1] = {owner = owner, field = f, was = was, now = expected}
      if expected == 0 and string.sub(f, 1, 2) == 'q:' then
        redis.call('HDEL', sh.owner_key(owner), f)
      else
        redis.call('HSET', sh.owner_key(owner), f, fmt(expected))
      end
      changed = true
    end
  end
  -- Its fair sets, from the counters as they now are (an owner left in a set it should not be in,
  -- or missing from one, is corrected here too).
  if changed or queue_checked then
    for _, kind in ipairs({'g', 'c'}) do
      for _, p in ipairs(redis.call('ZRANGE', sh.K_TIERS, 0, -1)) do
        if (w['q:' .. kind .. ':' .. p] or 0) == 0 then redis.call('ZREM', sh.fair_key(kind, p), owner) end
      end
    end
    sh.refresh_owner(owner)
  end
end
-- Reservations of tasks no longer queued, or of workers no longer live (a claim ends one only
-- when it meets its task among the candidates), and entries left without their worker's.
local r = sh.reserved()
for worker, task in pairs(r.worker) do
  local st = load_task(task)
  local live = tonumber(redis.call('ZSCORE', K_LIVENESS, worker) or '0') > now_ms
  if not (st and st.state == 'QUEUED' and st.reserved_on == worker and live) then
    sh.unreserve_worker(worker)
    fixed[#fixed + 1] = {owner = st and st.owner or '', field = 'reservation',
                         was = worker .. ' for ' .. task .. (live and '' or ' (not live)'), now = 'none'}
  end
end
for task, worker in pairs(r.task) do
  if r.worker[worker] ~= task then
    redis.call('HDEL', sh.K_RESV, 't:' .. task)
    r.task[task] = nil
  end
end
for owner, task in pairs(r.owner) do
  if not r.task[task] then
    redis.call('HDEL', sh.K_RESV, 'o:' .. owner)
    r.owner[owner] = nil
  end
end
return reply({r = 'OK', fixed = fixed, queue_checked = queue_checked, tasks_checked = checked})
