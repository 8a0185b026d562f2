-- shares.lua: every owner's share in one snapshot (read-only): its counters, its decayed usage now,
-- its own limits and the lab's defaults, and the fair-share settings.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: none
-- Returns JSON {halflife_ms, min_charge_ms, reserve_after_ms, now, defaults=<limits JSON or ''>,
--               owners=[{owner, gpus, running, queued, usage, limits=<JSON or ''>}],
--               reservations=[{task, owner, worker, gpus, since}]}
local now_ms = now_parts()
local sh = sharing()
local K_FAIRCFG, K_OWNERS, K_LIMITS, owner_key = sh.K_FAIRCFG, sh.K_OWNERS, sh.K_LIMITS, sh.owner_key
local raw = redis.call('HMGET', K_FAIRCFG, 'halflife_ms', 'min_charge_ms', 't0', 'reserve_after_ms')
local h = tonumber(raw[1]) or sh.DEFAULT_HALFLIFE_MS
local t0 = tonumber(raw[3]) or now_ms
local factor = 2 ^ (-(now_ms - t0) / h)
local owners = redis.call('SMEMBERS', K_OWNERS)
table.sort(owners)
local out = {halflife_ms = h, min_charge_ms = tonumber(raw[2]) or sh.DEFAULT_MIN_CHARGE_MS,
             reserve_after_ms = tonumber(raw[4]) or sh.DEFAULT_RESERVE_AFTER_MS, now = now_ms, reservations = {},
             defaults = redis.call('HGET', K_LIMITS, '*') or '', owners = {}}
for i, owner in ipairs(owners) do
  local f = redis.call('HMGET', owner_key(owner), 'gpus', 'running', 'queued', 'usage')
  out.owners[i] = {owner = owner, gpus = tonumber(f[1] or '0'), running = tonumber(f[2] or '0'),
                   queued = tonumber(f[3] or '0'), usage = tonumber(f[4] or '0') * factor,
                   limits = redis.call('HGET', K_LIMITS, owner) or ''}
end
local all = redis.call('HGETALL', sh.K_RESV)
for i = 1, #all, 2 do
  local task = string.match(all[i], '^t:(.*)$')
  if task then
    local worker, since = string.match(all[i + 1], '^(.*)|(%d+)$')
    local st = load_task(task)
    if st then
      out.reservations[#out.reservations + 1] = {task = task, owner = st.owner, worker = worker,
                                                 gpus = tonumber(st.gpus), since = tonumber(since)}
    end
  end
end
table.sort(out.reservations, function(x, y) return x.since < y.since end)
return reply(out)
