-- lib.lua: shared prelude, prepended by the Java loader to every script of this folder.
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

local function queue_score(st)
  return (999 - st.priority) * 1e12 + st.seq
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
  -- QUEUED's index is the queue, which the callers keep (submit and requeue add, claim and cancel remove).
  if from ~= 'QUEUED' then redis.call('ZREM', K_STATE[from], st.id) end
  if to ~= 'QUEUED' then redis.call('ZADD', K_STATE[to], st.seq, st.id) end
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
  if to == 'QUEUED' then
    redis.call('ZADD', K_QUEUE, fmt(queue_score(st)), st.id)
  end
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

