-- lib.lua: shared prelude, prepended by the Java loader (LuaScript) to the scripts of this folder, each
-- with the part of it that the script reaches (below).
--
-- Every mutating script receives the same CORE KEYS first, then its own extras:
--   KEYS[1]  {ns}:tasks        HASH   task id -> task state (JSON, managed here)
--   KEYS[2]  {ns}:specs        HASH   task id -> task spec (JSON, written once at submit, never parsed here)
--   KEYS[3]  {ns}:queue        ZSET   queued task ids, score = (999 - priority) * 1e12 + submit seq
--   KEYS[4]  {ns}:workers      HASH   worker id -> worker record (JSON)
--   KEYS[5]  {ns}:liveness     ZSET   worker id -> liveness deadline (ms, Redis clock)
--   KEYS[6]  {ns}:deadlines    ZSET   task id -> ack deadline (ASSIGNED) or task lease deadline (RUNNING), ms
--   KEYS[7]  {ns}:epoch        STRING last fencing epoch issued
--   KEYS[8]  {ns}:seq          STRING last submit sequence number
--   KEYS[9]  {ns}:events       STREAM every transition, capped
--   KEYS[10..16] {ns}:state:QUEUED .. {ns}:state:TIMED_OUT  ZSET task id -> submit seq, the index of
--                tasks by state; but QUEUED's is the queue itself (KEYS[3]), so KEYS[10] is neither
--                read nor written: a second index of queued tasks would cost two writes per task
--   KEYS[17] {ns}:shapes      HASH   worker shape -> how many registered workers have it (see shape_of)
-- Epochs travel as decimal strings (they exceed cjson's 14 significant digits); Lua compares them
-- as numbers, exact below 2^53.
--
-- A script is loaded with the top-level units of this file and of its libraries that it reaches
-- (LuaUnits): each unit begins at a line starting with `local` in the first column (a function, or
-- a declaration naming all its locals on that line) and runs to the next; any other statement in
-- the first column is kept whatever reaches it. The loader refuses what would break that: two
-- top-level statements on one line, an indented one, a declaration whose values call anything
-- outside a function's body, a block or bracket left open past its unit, an unclosed long string
-- or comment, CRLF line ends.

redis.replicate_commands()

local K_TASKS, K_SPECS, K_QUEUE, K_WORKERS, K_LIVENESS = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local K_DEADLINES, K_EPOCH, K_SEQ, K_EVENTS = KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local K_STATE = {QUEUED = KEYS[10], ASSIGNED = KEYS[11], RUNNING = KEYS[12], SUCCEEDED = KEYS[13], FAILED = KEYS[14],
                 CANCELLED = KEYS[15], TIMED_OUT = KEYS[16]}
local K_SHAPES = KEYS[17]
local CORE_KEYS = 17

-- The task state machine; the same table as io.rlscheduler.core.TaskState.
local TRANSITIONS = {
  QUEUED    = {ASSIGNED = true, CANCELLED = true, FAILED = true},
  ASSIGNED  = {RUNNING = true, QUEUED = true, SUCCEEDED = true, FAILED = true, CANCELLED = true, TIMED_OUT = true},
  RUNNING   = {QUEUED = true, SUCCEEDED = true, FAILED = true, CANCELLED = true, TIMED_OUT = true},
  SUCCEEDED = {}, FAILED = {}, CANCELLED = {}, TIMED_OUT = {}
}
local TERMINAL = {SUCCEEDED = true, FAILED = true, CANCELLED = true, TIMED_OUT = true}

local EVENTS_MAXLEN = '100000'  -- overridden by scripts that take it as an argument (text, as given)

local function now_parts()
  local t = redis.call('TIME')
  local s, us = tonumber(t[1]), tonumber(t[2])
  return s * 1000 + math.floor(us / 1000), s * 1000000 + us
end

local function fmt(n)
  return string.format('%d', n)
end

-- Numbers that go to redis.call (scores) or into task records are turned into decimal text here:
-- redis.call formats a Lua number with printf's %.17g and cjson with %.14g, which costs a few
-- times more than this integer format (about 0.9 against 0.2 µs a number in Redis 6.2, and a
-- task's life writes dozens). Every number of a task record (times, each history entry's at, seq,
-- deadline, priority, resources, limits, attempt, lease losses, exit code) is stored as such text;
-- scripts convert with tonumber where they compare. ms_text keeps the last value: a script run
-- has one now_ms.
local ms_last, ms_last_text
local function ms_text(ms)
  if ms ~= ms_last then
    ms_last, ms_last_text = ms, fmt(ms)
  end
  return ms_last_text
end

local function reply(tbl)
  return cjson.encode(tbl)
end

-- A task's value in K_TASKS is two lines: the record as a JSON object without its history, a
-- newline, then the history as a JSON array. cjson escapes every newline inside a string, so the
-- first newline is the separator. The scripts never read the history, they only append to it, so
-- it stays text: decoding and re-encoding a growing array on every transition would cost more
-- than the rest of the record. In a loaded record, st.history is that text.
local function load_task(id)
  local raw = redis.call('HGET', K_TASKS, id)
  if not raw then return nil end
  local nl = string.find(raw, '\n', 1, true)
  local st = cjson.decode(string.sub(raw, 1, nl - 1))
  st.history = string.sub(raw, nl + 1)
  return st
end

local function save_task(st)
  local h = st.history
  st.history = nil
  local json = cjson.encode(st)
  st.history = h
  redis.call('HSET', K_TASKS, st.id, json .. '\n' .. h)
end

-- One history entry as JSON (the elements of the history array).
local function history_entry(at, from, to, epoch, worker, reason)
  return cjson.encode({at = at, from = from, to = to, epoch = epoch, worker = worker, reason = reason})
end

local function save_worker(w)
  redis.call('HSET', K_WORKERS, w.id, cjson.encode(w))
end

local function load_worker(id)
  local raw = redis.call('HGET', K_WORKERS, id)
  if not raw then return nil end
  return cjson.decode(raw)
end

-- A worker's liveness is not in its record, so that a renewal writes two small values and never
-- reads or re-encodes the record (renew.lua, which runs without this prelude, writes the same
-- two): its deadline is its score in K_LIVENESS; its field in K_BEATS is "<session>|<time of its
-- last heartbeat, ms>", written with the record at registration, so a renewal checks the session
-- there.
local K_BEATS = K_WORKERS .. ':beat'

local function liveness_of(id)
  return tonumber(redis.call('ZSCORE', K_LIVENESS, id) or '0')
end

local function beat(id, session, now_ms, deadline)
  redis.call('ZADD', K_LIVENESS, deadline, id)
  redis.call('HSET', K_BEATS, id, session .. '|' .. fmt(now_ms))
end

local function queue_score(st)
  return (999 - st.priority) * 1e12 + st.seq
end

-- Sharing between owners (docs/operations.md, "Sharing the GPUs"). Every key below is derived from
-- KEYS[3] and carries its {ns} hash tag. Owner names are [A-Za-z0-9._@-], so they never hold ':'.
--   {ns}:queue:g:<owner>, {ns}:queue:c:<owner>  ZSET  the owner's claimable queued tasks needing
--       GPUs (g) or none (c), score as the queue's: parked tasks are not in them
--   {ns}:queue:own:<owner>  HASH  the owner's counters, kept by the scripts that move its tasks:
--       gpus, running (held by its ASSIGNED and RUNNING tasks), queued (its QUEUED tasks, parked
--       ones too), usage (decayed usage, inflated: see charge), tokens and tokens_at (the rate's
--       bucket: take_token), q:<g|c>:<priority> (claimable tasks per kind and priority)
--   {ns}:queue:fair:<g|c>:<priority>  ZSET  owner -> usage / weight, for the owners with claimable
--       tasks of that kind and priority who are not at a limit that stops them taking another
--   {ns}:queue:tiers  ZSET  priority -> 999 - priority, the priorities that may have such owners
--   {ns}:queue:limits  HASH  owner -> limits JSON; field '*' the lab-wide defaults
--   {ns}:queue:fair    HASH  halflife_ms, min_charge_ms, t0 (the time usage is inflated from),
--       reserve_after_ms (0: no reservations)
--   {ns}:queue:owners  SET   every owner that ever submitted
--   {ns}:queue:big:<owner>  ZSET  the owner's claimable queued tasks needing RESERVE_MIN_GPUS or
--       more -> when they were queued (ms)
--   {ns}:queue:big     ZSET  owner -> when its oldest such task was queued: the owners whose oldest
--       big task waited longer than reserve_after_ms, oldest first, are offered a reservation
--   {ns}:queue:resv    HASH  the reservations: w:<worker> -> task, t:<task> -> worker|since ms,
--       o:<owner> -> task (one per owner); the task's record names its worker (reserved_on)
--
-- Every script's prelude would otherwise define all of this at every run, ack and heartbeat
-- included, which never use it: it is built the first time a run needs it (sharing()), once per run.
local S = nil
local function sharing()
  if S then return S end
  local K_LIMITS, K_FAIRCFG, K_TIERS, K_OWNERS = K_QUEUE .. ':limits', K_QUEUE .. ':fair', K_QUEUE .. ':tiers',
      K_QUEUE .. ':owners'
  local K_BIG, K_RESV = K_QUEUE .. ':big', K_QUEUE .. ':resv'
  local DEFAULT_HALFLIFE_MS, DEFAULT_MIN_CHARGE_MS, DEFAULT_RESERVE_AFTER_MS = 604800000, 60000, 1800000
  local RESERVE_MIN_GPUS = 2

  local function owner_key(owner) return K_QUEUE .. ':own:' .. owner end
  local function owner_queue(owner, kind) return K_QUEUE .. ':' .. kind .. ':' .. owner end
  local function fair_key(kind, priority) return K_QUEUE .. ':fair:' .. kind .. ':' .. priority end
  local function kind_of(st) return st.gpus ~= '0' and 'g' or 'c' end

  -- An owner's limits: its own, else the lab's defaults, else none (nil); weight 1 when unset.
  -- Read once per script run.
  local LIMIT_NAMES = {'max_gpus', 'max_running', 'max_queued', 'max_gpus_per_task', 'rate', 'burst', 'weight'}
  local limits_cache = {}
  local function clear_limits() limits_cache = {} end
  local function limits_of(owner)
    local l = limits_cache[owner]
    if l then return l end
    local raw = redis.call('HMGET', K_LIMITS, owner, '*')
    local own = raw[1] and cjson.decode(raw[1]) or {}
    local lab = raw[2] and cjson.decode(raw[2]) or {}
    l = {}
    for _, n in ipairs(LIMIT_NAMES) do
      local v = own[n]
      if v == nil or v == cjson.null then v = lab[n] end
      if v == cjson.null then v = nil end
      l[n] = v
    end
    if l.weight == nil then l.weight = 1 end
    limits_cache[owner] = l
    return l
  end

  -- Decayed usage is kept inflated: an amount charged at time t is stored as amount * 2^((t - t0) /
  -- half-life), so that every owner's stored usage decays by the same factor and their order never
  -- changes with time alone: usage now = stored * 2^(-(now - t0) / half-life). Once the factor passes
  -- 2^64 every stored usage is brought back to it at t0 = now (rebase, O(owners)).
  --
  -- A run reads each counter of an owner once and writes what it changed once, when it ends
  -- (owner_write from flush_owners): a claim or finish of many tasks of one owner costs a few
  -- commands per owner, not per task. counter reads through the run's changes; bump changes one.
  local counters = {}   -- owner -> {v = field -> value as this run left it, d = field -> change not yet written}
  local dirty_owners = {}  -- owners with changes to write
  local resort = {}        -- owners whose usage or limits changed: their fair sets to bring up to date
  local function counters_of(owner)
    local c = counters[owner]
    if not c then
      c = {v = {}, d = {}}
      local all = redis.call('HGETALL', owner_key(owner))
      for i = 1, #all, 2 do c.v[all[i]] = tonumber(all[i + 1]) end
      counters[owner] = c
    end
    return c
  end
  local function counter(owner, field)
    local c = counters_of(owner)
    return c.v[field] or 0, c
  end
  local function bump(owner, field, delta)
    local v, c = counter(owner, field)
    c.v[field] = v + delta
    c.d[field] = (c.d[field] or 0) + delta
    dirty_owners[owner] = true
    return v + delta
  end
  local function owner_write(owner)
    local c = counters[owner]
    if not c then return end
    local key = owner_key(owner)
    for field, d in pairs(c.d) do
      if field == 'usage' then
        if d ~= 0 then redis.call('HINCRBYFLOAT', key, field, string.format('%.17g', d)) end
      elseif string.sub(field, 1, 2) == 'q:' and c.v[field] <= 0 then
        redis.call('HDEL', key, field)  -- a kind and priority without tasks leaves no field
        c.v[field] = nil
      elseif d ~= 0 then
        redis.call('HINCRBY', key, field, fmt(d))  -- fmt: never '-0', which HINCRBY refuses
      end
    end
    c.d = {}
    if c.bucket then
      redis.call('HSET', key, 'tokens', string.format('%.17g', c.v.tokens), 'tokens_at', fmt(c.v.tokens_at))
      c.bucket = nil
    end
  end

  -- The submission rate's token bucket (`burst` tokens at most, `rate` more a second, one a
  -- submission), read with the owner's counters and written with them once per run: takes a token,
  -- or returns how many ms until one is there.
  local function take_token(owner, rate, burst, now_ms)
    local c = counters_of(owner)
    local tokens = burst
    if c.v.tokens_at then tokens = math.min(burst, c.v.tokens + (now_ms - c.v.tokens_at) * rate / 1000) end
    if tokens < 1 then return math.ceil((1 - tokens) * 1000 / rate) end
    c.v.tokens, c.v.tokens_at, c.bucket = tokens - 1, now_ms, true
    dirty_owners[owner] = true
    return nil
  end

  local fair_cfg = nil
  local refresh_owner
  local function rebase(cfg, now_ms)
    local factor = 2 ^ (-(now_ms - cfg.t0) / cfg.h)
    for _, owner in ipairs(redis.call('SMEMBERS', K_OWNERS)) do
      owner_write(owner)
      local u = tonumber(redis.call('HGET', owner_key(owner), 'usage') or '0')
      if u ~= 0 then redis.call('HSET', owner_key(owner), 'usage', string.format('%.17g', u * factor)) end
      if counters[owner] then counters[owner].v.usage = u * factor end
    end
    cfg.t0 = now_ms
    redis.call('HSET', K_FAIRCFG, 't0', fmt(now_ms))
    for _, owner in ipairs(redis.call('SMEMBERS', K_OWNERS)) do refresh_owner(owner) end
  end

  local function fair_config(now_ms)
    if fair_cfg then return fair_cfg end
    local raw = redis.call('HMGET', K_FAIRCFG, 'halflife_ms', 'min_charge_ms', 't0', 'reserve_after_ms')
    fair_cfg = {h = tonumber(raw[1]) or DEFAULT_HALFLIFE_MS, min = tonumber(raw[2]) or DEFAULT_MIN_CHARGE_MS,
                t0 = tonumber(raw[3]), reserve_after = tonumber(raw[4]) or DEFAULT_RESERVE_AFTER_MS}
    if not fair_cfg.t0 then
      fair_cfg.t0 = now_ms
      redis.call('HSET', K_FAIRCFG, 't0', fmt(now_ms))
    elseif (now_ms - fair_cfg.t0) / fair_cfg.h > 64 then
      rebase(fair_cfg, now_ms)
    end
    return fair_cfg
  end

  -- What a task holds while it runs, in the unit usage is counted in: GPUs, or CPU slots for a task
  -- that needs no GPU.
  local function slots_of(st)
    local g = tonumber(st.gpus)
    if g > 0 then return g end
    return tonumber(st.cpu)
  end

  -- Whether the owner is at a limit that stops it taking another task of this kind.
  local function at_limit(l, kind, gpus, running)
    if l.max_running ~= nil and running >= l.max_running then return true end
    return kind == 'g' and l.max_gpus ~= nil and gpus >= l.max_gpus
  end

  -- Puts the owner into, or takes it out of, the fair set of each kind and priority it has claimable
  -- tasks of, at its current usage per share. O(the priorities it has tasks at).
  refresh_owner = function(owner)
    owner_write(owner)
    resort[owner] = nil
    local f = counters_of(owner).v
    local l = limits_of(owner)
    local gpus, running = f.gpus or 0, f.running or 0
    local score = string.format('%.17g', (f.usage or 0) / l.weight)
    for name, count in pairs(f) do
      local kind, priority = string.match(name, '^q:(%a):(%d+)$')
      if kind then
        if count > 0 and not at_limit(l, kind, gpus, running) then
          if redis.call('ZADD', fair_key(kind, priority), score, owner) == 1 then
            redis.call('ZADD', K_TIERS, fmt(999 - tonumber(priority)), priority)
          end
        else
          redis.call('ZREM', fair_key(kind, priority), owner)
        end
      end
    end
  end

  -- Owners whose counters or usage this run changed (dirty_owners, kept by bump): what changed is
  -- written and their fair sets are brought up to date once, when the run ends (flush_owners, which
  -- the Java loader calls after every script's body, as flush_events), not at every transition. A
  -- claim keeps its own view of the order meanwhile.
  local function flush_owners()
    local owners = dirty_owners
    dirty_owners = {}
    for owner in pairs(owners) do owner_write(owner) end
    local sorted = resort
    resort = {}
    for owner in pairs(sorted) do refresh_owner(owner) end
  end

  -- Adds `amount` slot-seconds to the owner's decayed usage, at now.
  local function charge(owner, amount, now_ms)
    if amount <= 0 then return end
    local cfg = fair_config(now_ms)
    bump(owner, 'usage', amount * 2 ^ ((now_ms - cfg.t0) / cfg.h))
    resort[owner] = true
  end

  -- An attempt's usage, charged exactly once whatever ends it: at its start a minimum
  -- (min_charge_ms), so that the next claim of the same run already sees it; while it runs, at its
  -- heartbeats once another minimum has passed (charge_running); at its end the rest. st.charged
  -- is the time already charged for the attempt, ms; st.claimed_at its start.
  local function charge_start(st, now_ms)
    local cfg = fair_config(now_ms)
    st.claimed_at = ms_text(now_ms)
    st.charged = fmt(cfg.min)
    st.charge_step = fmt(cfg.min)  -- lets a heartbeat tell without this library whether a charge is due
    charge(st.owner, slots_of(st) * cfg.min / 1000, now_ms)
  end

  local function charge_until(st, now_ms)
    local elapsed = now_ms - tonumber(st.claimed_at or now_ms)
    local extra = elapsed - tonumber(st.charged or '0')
    if extra <= 0 then return false end
    st.charged = fmt(elapsed)
    charge(st.owner, slots_of(st) * extra / 1000, now_ms)
    return true
  end

  -- A running attempt's usage so far, charged by its heartbeats once another minimum has passed
  -- since the last charge; the caller saves the record. Returns whether it charged.
  local function charge_running(st, now_ms)
    if not st.claimed_at then return false end
    local cfg = fair_config(now_ms)
    if now_ms - tonumber(st.claimed_at) - tonumber(st.charged or '0') < cfg.min then return false end
    charge_until(st, now_ms)
    return true
  end

  -- Reservations (docs/operations.md, "Big runs are not starved"): a claimable task needing
  -- RESERVE_MIN_GPUS or more that has waited reserve_after_ms is given a worker that could run it
  -- (claiming.lua); that worker takes no new work that would use what the task needs until it
  -- starts there. One per owner. The reservations are read once per script run (reserved).
  local resv = nil
  local function reserved()
    if resv then return resv end
    resv = {worker = {}, task = {}, owner = {}}
    local all = redis.call('HGETALL', K_RESV)
    for i = 1, #all, 2 do
      local kind, name = string.sub(all[i], 1, 1), string.sub(all[i], 3)
      if kind == 'w' then resv.worker[name] = all[i + 1]
      elseif kind == 'o' then resv.owner[name] = all[i + 1]
      elseif kind == 't' then resv.task[name] = string.match(all[i + 1], '^(.*)|')
      end
    end
    return resv
  end
  local function reserve(st, worker_id, now_ms)
    local r = reserved()
    redis.call('HSET', K_RESV, 'w:' .. worker_id, st.id, 't:' .. st.id, worker_id .. '|' .. fmt(now_ms),
               'o:' .. st.owner, st.id)
    r.worker[worker_id], r.task[st.id], r.owner[st.owner] = st.id, worker_id, st.id
    st.reserved_on, st.reserved_at = worker_id, ms_text(now_ms)
  end
  -- Ends the task's reservation, if it has one; the caller saves the record.
  local function unreserve(st)
    local w = st.reserved_on
    if not w then return end
    redis.call('HDEL', K_RESV, 'w:' .. w, 't:' .. st.id, 'o:' .. st.owner)
    if resv then resv.worker[w], resv.task[st.id], resv.owner[st.owner] = nil, nil, nil end
    st.reserved_on, st.reserved_at = nil, nil
  end
  -- Ends a reservation known only by its worker (the worker left, or its task is gone).
  local function unreserve_worker(worker_id)
    local r = reserved()
    local task_id = r.worker[worker_id]
    if not task_id then return end
    local st = load_task(task_id)
    if st and st.reserved_on == worker_id then
      unreserve(st)
      save_task(st)
    else
      redis.call('HDEL', K_RESV, 'w:' .. worker_id, 't:' .. task_id)
      r.worker[worker_id], r.task[task_id] = nil, nil
      for owner, t in pairs(r.owner) do
        if t == task_id then
          redis.call('HDEL', K_RESV, 'o:' .. owner)
          r.owner[owner] = nil
        end
      end
    end
  end
  local function big_key(owner) return K_BIG .. ':' .. owner end

  -- Adds a QUEUED task to its owner's queue of claimable tasks (also when it comes back unparked).
  local function owner_enqueue(st, now_ms)
    local kind = kind_of(st)
    if tonumber(st.gpus) >= RESERVE_MIN_GPUS then
      local at = fmt(now_ms or now_parts())
      redis.call('ZADD', big_key(st.owner), at, st.id)
      redis.call('ZADD', K_BIG, 'LT', at, st.owner)
    end
    redis.call('ZADD', owner_queue(st.owner, kind), fmt(queue_score(st)), st.id)
    if bump(st.owner, 'q:' .. kind .. ':' .. st.priority, 1) == 1 then
      -- The owner's first such task: into the fair set at once, so that a claim later in the same
      -- run (submit_claim) sees it.
      refresh_owner(st.owner)
    end
  end

  -- Takes a task out of its owner's queue of claimable tasks (claimed, cancelled, parked); a task
  -- that is not in it (parked) changes nothing.
  local function owner_dequeue(st)
    local kind = kind_of(st)
    if tonumber(st.gpus) >= RESERVE_MIN_GPUS then
      if redis.call('ZREM', big_key(st.owner), st.id) == 1 then
        local first = redis.call('ZRANGE', big_key(st.owner), 0, 0, 'WITHSCORES')
        if #first == 0 then
          redis.call('ZREM', K_BIG, st.owner)
        else
          redis.call('ZADD', K_BIG, first[2], st.owner)
        end
      end
      unreserve(st)
    end
    if redis.call('ZREM', owner_queue(st.owner, kind), st.id) == 1 then
      if bump(st.owner, 'q:' .. kind .. ':' .. st.priority, -1) <= 0 then
        redis.call('ZREM', fair_key(kind, st.priority), st.owner)
      end
    end
  end

  -- The owner's side of a transition: its queue, its counters and its usage, kept by the one
  -- function every state change goes through (transition), so no path can miss them.
  local function owner_transition(st, from, to, now_ms)
    local owner = st.owner
    if from == 'QUEUED' then
      redis.call('ZREM', K_QUEUE, st.id)
      owner_dequeue(st)
      bump(owner, 'queued', -1)
    end
    if to == 'ASSIGNED' then
      bump(owner, 'gpus', tonumber(st.gpus))
      bump(owner, 'running', 1)
      resort[owner] = true  -- a limit may stop it now, and its usage grows
      charge_start(st, now_ms)
    elseif (from == 'ASSIGNED' or from == 'RUNNING') and to ~= 'RUNNING' then
      -- An owner that was at a limit may take more now: its fair sets are looked at again.
      local l = limits_of(owner)
      if l.max_running ~= nil or l.max_gpus ~= nil then resort[owner] = true end
      bump(owner, 'gpus', -tonumber(st.gpus))
      bump(owner, 'running', -1)
      charge_until(st, now_ms)
    end
    if to == 'QUEUED' then
      redis.call('ZADD', K_QUEUE, fmt(queue_score(st)), st.id)
      bump(owner, 'queued', 1)
      st.reserved_on, st.reserved_at = nil, nil
      owner_enqueue(st, now_ms)
    end
  end
  S = {K_LIMITS = K_LIMITS, K_FAIRCFG = K_FAIRCFG, K_TIERS = K_TIERS, K_OWNERS = K_OWNERS, K_BIG = K_BIG,
       K_RESV = K_RESV, DEFAULT_HALFLIFE_MS = DEFAULT_HALFLIFE_MS, DEFAULT_MIN_CHARGE_MS = DEFAULT_MIN_CHARGE_MS,
       DEFAULT_RESERVE_AFTER_MS = DEFAULT_RESERVE_AFTER_MS, reserved = reserved, reserve = reserve, big_key = big_key, take_token = take_token,
       unreserve = unreserve, unreserve_worker = unreserve_worker,
       owner_key = owner_key, owner_queue = owner_queue, fair_key = fair_key, limits_of = limits_of,
       clear_limits = clear_limits, fair_config = fair_config, rebase = rebase, at_limit = at_limit,
       refresh_owner = refresh_owner, counter = counter, bump = bump, flush_owners = flush_owners,
       charge_running = charge_running, owner_enqueue = owner_enqueue, owner_dequeue = owner_dequeue,
       owner_transition = owner_transition}
  return S
end

-- The owners this run changed: their counters written, their fair sets brought up to date (the
-- epilogue calls it after every script's body, as flush_events).
local function flush_owners()
  if S then S.flush_owners() end
end

-- Task transitions are written to the stream when the script run ends (flush_events, which the
-- Java loader calls after every script's body; see LuaScript): a run with one transition writes
-- one entry, type=task with the nine fields below; a run with more writes them EVENTS_PER_ENTRY
-- to an entry (a lone one left over is written as a run's single one would be): type=tasks,
-- n=<count>, then fields "1".."n", each one
-- transition as text, tab-separated: task, from, to, epoch, worker, attempt, via, at, lines, exit,
-- reason (reason last, as the only field that may hold a tab: readers split into at most eleven).
-- lines and exit are set only on an end its worker recorded (via=worker): the output lines the
-- attempt printed and its exit code ('' when it has none); the single form then has them as two
-- more fields. They make that event the one source of an attempt's end for the masters. One
-- XADD per run instead of one per transition: a task's four transitions cost four XADDs, their
-- arguments, and four entries for every subscriber to read.
local EVENTS_PER_ENTRY = 64
local ev_n = 0
local ev_buf = {}
-- The first buffered transition's fields, for a run that ends with just one.
local e_id, e_from, e_to, e_epoch, e_worker, e_attempt, e_reason, e_via, e_at, e_lines, e_exit

local function flush_events()
  local n = ev_n
  if n == 0 then return end
  -- Emptied before the XADD: if it fails, the epilogue must not write the same events again
  -- (from a cleared buffer), hiding the real error.
  ev_n = 0
  if n == 1 and e_lines == '' then
    redis.call('XADD', K_EVENTS, 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'type', 'task', 'task', e_id, 'from', e_from,
               'to', e_to, 'epoch', e_epoch, 'worker', e_worker, 'attempt', e_attempt, 'reason', e_reason,
               'via', e_via, 'at', e_at)
  elseif n == 1 then
    redis.call('XADD', K_EVENTS, 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'type', 'task', 'task', e_id, 'from', e_from,
               'to', e_to, 'epoch', e_epoch, 'worker', e_worker, 'attempt', e_attempt, 'reason', e_reason,
               'via', e_via, 'at', e_at, 'lines', e_lines, 'exit', e_exit)
  else
    local args = {'XADD', K_EVENTS, 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'type', 'tasks', 'n', fmt(n)}
    local a = #args
    for i = 1, n do
      args[a + 2 * i - 1] = fmt(i)
      args[a + 2 * i] = ev_buf[i]
      ev_buf[i] = nil
    end
    redis.call(unpack(args))
  end
end

-- Any other event (worker, master, cancel requested): written at once, after the transitions
-- buffered before it, so that the stream keeps the order in which things happened.
local function emit(kind, fields)
  flush_events()
  local args = {'XADD', K_EVENTS, 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'type', kind}
  for k, v in pairs(fields) do
    args[#args + 1] = k
    args[#args + 1] = tostring(v)
  end
  return redis.call(unpack(args))
end

local function event_text(id, from, to, epoch, worker, attempt, via, at, lines, exit, reason)
  return id .. '\t' .. from .. '\t' .. to .. '\t' .. epoch .. '\t' .. worker .. '\t' .. attempt .. '\t' .. via .. '\t'
      .. at .. '\t' .. lines .. '\t' .. exit .. '\t' .. reason
end

-- A task transition's event, buffered until the run ends (flush_events). The first is kept as
-- its fields and turned into text only when a second comes.
local function emit_task(id, from, to, epoch, worker, attempt, reason, via, at, lines, exit)
  if ev_n == EVENTS_PER_ENTRY then flush_events() end
  at, lines, exit = ms_text(at), lines or '', exit or ''
  if ev_n == 0 then
    e_id, e_from, e_to, e_epoch, e_worker, e_attempt, e_reason, e_via, e_at, e_lines, e_exit =
        id, from, to, epoch, worker, attempt, reason, via, at, lines, exit
  else
    if ev_n == 1 then
      ev_buf[1] = event_text(e_id, e_from, e_to, e_epoch, e_worker, e_attempt, e_via, e_at, e_lines, e_exit, e_reason)
    end
    ev_buf[ev_n + 1] = event_text(id, from, to, epoch, worker, attempt, via, at, lines, exit, reason)
  end
  ev_n = ev_n + 1
end

-- Moves a task to state `to`, checking the transition table; records history, index and event.
-- `via` names who caused it (submit, claim, worker, cancel, reaper, register) for event readers.
-- Returns nil, or, when the table does not allow the move (a stored state it does not know
-- included), an error reply that changed nothing:
--   ILLEGAL_TRANSITION <from> -> <to> for <task id> at epoch <epoch>
-- which the script returns as its answer, or as one item's {r="ERROR", error} in a batched
-- answer; the core raises it as IllegalTaskStateException (RedisFailures).
local function transition(st, to, now_ms, reason, via)
  local from = st.state
  local allowed = TRANSITIONS[from]
  if not (allowed and allowed[to]) then
    return redis.error_reply('ILLEGAL_TRANSITION ' .. tostring(from) .. ' -> ' .. to .. ' for ' .. st.id
        .. ' at epoch ' .. st.epoch)
  end
  st.state = to
  st.updated_at = ms_text(now_ms)
  st.reason = reason or ''
  local h = st.history
  st.history = string.sub(h, 1, -2) .. (h == '[]' and '' or ',')
      .. history_entry(ms_text(now_ms), from, to, st.epoch, st.worker or '', reason or '') .. ']'
  -- QUEUED's index is the queue, kept with the owner's side (submit adds a new task itself).
  if from ~= 'QUEUED' then redis.call('ZREM', K_STATE[from], st.id) end
  if to ~= 'QUEUED' then redis.call('ZADD', K_STATE[to], st.seq, st.id) end
  -- The owner's side, but for an acknowledgement (ASSIGNED -> RUNNING), which changes none of it.
  if not (from == 'ASSIGNED' and to == 'RUNNING') then sharing().owner_transition(st, from, to, now_ms) end
  local lines, exit = '', ''
  if via == 'worker' and TERMINAL[to] then
    lines = st.log_lines or ''
    exit = st.has_exit_code and st.exit_code or ''
  end
  emit_task(st.id, from, to, st.epoch, st.worker or '', st.attempt, reason or '', via or '', now_ms, lines, exit)
  return nil
end

local function split_ids(csv)
  local ids = {}
  if csv == nil or csv == '' then return ids end
  for id in string.gmatch(csv, '[^,]+') do ids[#ids + 1] = tonumber(id) end
  return ids
end

-- A worker's reservations live in their own hash, {ns}:workers:res:<worker id>, task id ->
-- "epoch|gpu ids|cpu slots|memory bytes" (the worker's side of ownership), so that taking or
-- releasing one is a field write, not a rewrite of the worker record. The key is derived from
-- KEYS[4]: it carries the same {ns} hash tag, so it lives in the same Cluster slot.
local K_RES_PREFIX = K_WORKERS .. ':res:'

local function res_key(worker_id)
  return K_RES_PREFIX .. worker_id
end

local function res_value(st)
  return st.epoch .. '|' .. st.gpu_ids .. '|' .. st.cpu .. '|' .. st.mem
end

local function parse_res(v)
  local e, g, c, m = string.match(v, '^([^|]*)|([^|]*)|([^|]*)|([^|]*)$')
  return {e = e, g = g, c = tonumber(c), m = tonumber(m)}
end

-- Every reservation of a worker: task id -> {e, g, c, m}.
local function reservations(worker_id)
  local all = redis.call('HGETALL', res_key(worker_id))
  local out = {}
  for i = 1, #all, 2 do out[all[i]] = parse_res(all[i + 1]) end
  return out
end

-- Free capacity of a worker, derived from its total minus what its owned tasks reserve, so a
-- reservation released twice cannot free anything twice.
-- Without `held`, the reservations are read and summed as they come, without building a table
-- per reservation (claim's case: half the cost with 32 reservations).
local function free_capacity(w, held)
  local used = {}
  local cpu, mem = w.cpu, w.mem
  if held then
    for _, r in pairs(held) do
      cpu = cpu - r.c
      mem = mem - r.m
      for _, g in ipairs(split_ids(r.g)) do used[g] = true end
    end
  else
    local all = redis.call('HGETALL', res_key(w.id))
    for i = 2, #all, 2 do
      local g, c, m = string.match(all[i], '^[^|]*|([^|]*)|([^|]*)|([^|]*)$')
      cpu = cpu - tonumber(c)
      mem = mem - tonumber(m)
      if g ~= '' then
        for id in string.gmatch(g, '[^,]+') do used[tonumber(id)] = true end
      end
    end
  end
  local gpus = {}
  for _, g in ipairs(split_ids(w.gpus)) do
    if not used[g] then gpus[#gpus + 1] = g end
  end
  table.sort(gpus)
  return cpu, mem, gpus
end

-- Drops the worker-side half of a task's ownership. The field can only hold the task's current
-- epoch: a later claim of the task by the same worker overwrites it, and st.epoch is the latest
-- epoch there is; so no epoch check (and no read) is needed, and deleting twice frees nothing twice.
local function release(st)
  if not st.worker or st.worker == '' then return end
  redis.call('HDEL', res_key(st.worker), st.id)
end

local function clear_assignment(st)
  st.worker = ''
  st.session = ''
  st.gpu_ids = ''
  st.deadline = '0'
  redis.call('ZREM', K_DEADLINES, st.id)
end

-- Takes a task away from its worker: back to the queue, or FAILED when a limit is exhausted, or
-- CANCELLED when a cancel was requested. lease_loss counts towards max_lease_losses.
-- Returns the new state.
local function requeue(st, now_ms, reason, lease_loss, via)
  release(st)
  local losses = tonumber(st.lease_losses)
  if lease_loss then
    losses = losses + 1
    st.lease_losses = fmt(losses)
  end
  local max_losses, attempt, max_attempts = tonumber(st.max_lease_losses), tonumber(st.attempt), tonumber(st.max_attempts)
  local to, why = 'QUEUED', reason
  if st.cancel_requested then
    to, why = 'CANCELLED', reason .. '; cancel was requested'
  elseif losses > max_losses then
    to, why = 'FAILED', reason .. '; lease lost ' .. fmt(losses) .. ' times (limit ' .. fmt(max_losses) .. ')'
  elseif attempt >= max_attempts then
    to, why = 'FAILED', reason .. '; ' .. fmt(attempt) .. ' attempts made (limit ' .. fmt(max_attempts) .. ')'
  end
  if to == 'FAILED' then st.error = why end
  local err = transition(st, to, now_ms, why, via)
  if err then return err end
  clear_assignment(st)
  save_task(st)
  return to
end

-- Adds a task taken back to the answer's list for the state requeue moved it to: out.requeued,
-- out.failed or out.cancelled.
local function tally(out, to, task_id)
  if to == 'QUEUED' then out.requeued[#out.requeued + 1] = task_id
  elseif to == 'FAILED' then out.failed[#out.failed + 1] = task_id
  else out.cancelled[#out.cancelled + 1] = task_id end
end

-- Takes back every task a worker still holds at the epoch its reservation names (a new session
-- of it registered, or it was revoked): each goes through requeue and into the answer (tally).
-- Returns nil, or the error reply of a move the table refused.
local function take_back(worker_id, now_ms, reason, lease_loss, via, out)
  for task_id, r in pairs(reservations(worker_id)) do
    local st = load_task(task_id)
    if st and st.epoch == r.e and st.worker == worker_id and (st.state == 'ASSIGNED' or st.state == 'RUNNING') then
      local to = requeue(st, now_ms, reason, lease_loss, via)
      if type(to) == 'table' then return to end
      tally(out, to, task_id)
    end
  end
  return nil
end

-- The leader check of the claim and reap scripts: passes when no leader id is given (the core used
-- without masters), or when the given master holds the leadership lease at the given epoch.
local function check_leader(k_leader, master, epoch, now_ms)
  if master == nil or master == '' then return true end
  local holder = redis.call('HGET', k_leader, 'holder')
  local current = redis.call('HGET', k_leader, 'epoch')
  local deadline = tonumber(redis.call('HGET', k_leader, 'deadline') or '0')
  return holder == master and current == epoch and deadline > now_ms
end

-- A worker-side write is owned when the epoch is the task's current one and the task is held.
-- Returns nil when owned, else the answer to give.
local function check_owned(st, epoch, worker, session)
  if not st then return {r = 'UNKNOWN_TASK'} end
  if st.epoch ~= epoch or (st.state ~= 'ASSIGNED' and st.state ~= 'RUNNING' and not TERMINAL[st.state]) then
    return {r = 'STALE', epoch = st.epoch, state = st.state}
  end
  if st.worker ~= worker then
    return {r = 'STALE', epoch = st.epoch, state = st.state}
  end
  if session and st.session ~= session and not TERMINAL[st.state] then
    return {r = 'WRONG_SESSION', epoch = st.epoch, state = st.state}
  end
  return nil
end

