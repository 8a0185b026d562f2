-- checkpoint.lua: moves a task's "latest checkpoint" pointer, and notes which checkpoint an attempt
-- resumed from. Both are worker-side writes fenced as finish.lua's are (check_owned): only the
-- attempt holding the task's current epoch may write, while it runs or after it ended; a stale
-- attempt's write changes nothing.
-- KEYS: the 17 core keys (lib.lua), then [18] {ns}:checkpoints:<task id> LIST of committed
--       checkpoints, newest first (JSON entries, written here), [19] {ns}:restores:<task id> HASH
--       attempt number -> JSON note of what that attempt resumed from (written by the worker)
-- ARGV: [1] 'commit', 'restored' or 'error', [2] task id, [3] epoch, [4] worker id, [5] session id, then
--   commit:   [6] attempt, [7] checkpoint number within the attempt (1, 2, ...), [8] manifest key in
--             the store, [9] manifest SHA-256, [10] bytes, [11] files, [12] how many to keep (>= 1),
--             [13] the most bytes the kept checkpoints may hold together ('0': no limit)
--   restored: [6] attempt, [7] the note (JSON object text)
--   error:    [6] why a checkpoint could not be committed (kept as the record's artifact_error)
-- A commit of a checkpoint the list holds answers DUPLICATE, whoever holds the task now: it is
-- committed, and a replay (Lettuce re-sends a command whose answer a broken connection lost; the
-- worker retries one that failed in transit) must not read as a refusal, or the worker would
-- delete the objects of a committed checkpoint. Otherwise a commit is accepted only forward (its
-- (epoch, number) must be greater than the newest entry's) and only if the checkpoints kept after
-- it fit the task's byte limit; one that does not is refused TOO_LARGE and said in the task record
-- (artifact_error) until a commit succeeds.
-- Returns JSON: {r="OK", id, evicted=[entries dropped beyond the kept count, oldest last]} |
--   {r="DUPLICATE", id} (the list holds that checkpoint) | {r="BEHIND", latest} (a newer one is
--   committed, and this one is not) | {r="TOO_LARGE", bytes (what the kept ones would hold)} |
--   {r="STALE"|"WRONG_SESSION"|"UNKNOWN_TASK", epoch, state}
local K_LIST, K_RESTORES = KEYS[18], KEYS[19]
local op, task_id, epoch, worker, session = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local now_ms = now_parts()

if op == 'commit' then
  local id = 'e' .. epoch .. '-' .. ARGV[7]
  for _, kept in ipairs(redis.call('LRANGE', K_LIST, 0, -1)) do
    if cjson.decode(kept).id == id then return reply({r = 'DUPLICATE', id = id}) end
  end
end

local st = load_task(task_id)
local denied = check_owned(st, epoch, worker, session)
if denied then return reply(denied) end

if op == 'restored' then
  redis.call('HSET', K_RESTORES, ARGV[6], ARGV[7])
  return reply({r = 'OK'})
end
if op == 'error' then
  st.artifact_error = ARGV[6]
  save_task(st)
  return reply({r = 'OK'})
end
if op ~= 'commit' then
  return redis.error_reply('BAD_ARGUMENT unknown operation ' .. tostring(op))
end

local n = tonumber(ARGV[7])
local id = 'e' .. epoch .. '-' .. ARGV[7]
local newest = redis.call('LINDEX', K_LIST, 0)
if newest then
  local e = cjson.decode(newest)
  local ne, ce = tonumber(e.epoch), tonumber(epoch)
  if ne > ce or (ne == ce and tonumber(e.n) >= n) then return reply({r = 'BEHIND', latest = e.id}) end
end
local keep = tonumber(ARGV[12])
local max_bytes = tonumber(ARGV[13] or '0')
if max_bytes > 0 then
  local total = tonumber(ARGV[10])
  for _, e in ipairs(redis.call('LRANGE', K_LIST, 0, keep - 2)) do
    total = total + tonumber(cjson.decode(e).bytes)
  end
  if total > max_bytes then
    st.artifact_error = 'checkpoint ' .. id .. ' not committed: the ' .. keep .. ' kept checkpoints would hold '
        .. fmt(total) .. ' bytes, over the task\'s limit of ' .. ARGV[13] .. ' bytes (maxCheckpointBytes)'
    save_task(st)
    return reply({r = 'TOO_LARGE', bytes = fmt(total)})
  end
end
if st.artifact_error then
  st.artifact_error = nil
  save_task(st)
end
redis.call('LPUSH', K_LIST, cjson.encode({id = id, epoch = epoch, attempt = ARGV[6], n = ARGV[7], manifest = ARGV[8],
                                         sha256 = ARGV[9], bytes = ARGV[10], files = ARGV[11], worker = worker,
                                         at = ms_text(now_ms)}))
local evicted = {}
while redis.call('LLEN', K_LIST) > keep do
  evicted[#evicted + 1] = redis.call('RPOP', K_LIST)
end
return reply({r = 'OK', id = id, evicted = evicted})
