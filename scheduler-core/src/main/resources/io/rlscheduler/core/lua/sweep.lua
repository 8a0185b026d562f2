-- sweep.lua: records a sweep (many runs submitted as one, under one id) before its runs are
-- submitted, so that a sweep whose submission was cut short is still found whole by its id, and
-- submitting it again fills in the runs that are missing.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:sweep:<id>          STRING  the sweep's record JSON (as the caller made it)
--   KEYS[19] {ns}:sweeps              ZSET    sweep id by creation time (ms)
--   KEYS[20] {ns}:sweeps:owner:<o>    ZSET    the owner's sweep ids by creation time (ms)
--   KEYS[21] {ns}:sweep-of            HASH    run (task) id -> sweep id
-- ARGV: [1] sweep id  [2] record JSON  [3] creation time (ms)  [4..] the runs' task ids
-- Returns JSON: {r="OK"} (recorded) | {r="EXISTS", sweep=the record JSON stored before}
--             | {r="TAKEN", run=task id} (a run's id is a task outside this sweep: nothing written)
local K_SWEEP, K_SWEEPS, K_OWNER, K_OF = KEYS[CORE_KEYS + 1], KEYS[CORE_KEYS + 2], KEYS[CORE_KEYS + 3], KEYS[CORE_KEYS + 4]
local existing = redis.call('GET', K_SWEEP)
if existing then return reply({r = 'EXISTS', sweep = existing}) end
local id = ARGV[1]
for i = 4, #ARGV do
  -- A new sweep's run ids must be free: a task of that id (another sweep's, or a plain run) would
  -- be claimed by this sweep's listing and comparison.
  if redis.call('HEXISTS', K_OF, ARGV[i]) == 1 or redis.call('HEXISTS', K_TASKS, ARGV[i]) == 1 then
    return reply({r = 'TAKEN', run = ARGV[i]})
  end
end
redis.call('SET', K_SWEEP, ARGV[2])
redis.call('ZADD', K_SWEEPS, ARGV[3], id)
redis.call('ZADD', K_OWNER, ARGV[3], id)
for i = 4, #ARGV do redis.call('HSET', K_OF, ARGV[i], id) end
return reply({r = 'OK'})
