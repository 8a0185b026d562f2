-- leader.lua: acquires or renews the masters' leadership lease, by the Redis clock. The lease has
-- its own fencing epoch, bumped each time leadership changes hands; the claim and reap scripts
-- refuse a master whose epoch is not the current leader's, so a leader that was paused and lost
-- its lease cannot dispatch or reap when it wakes up.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:leader  HASH  holder, epoch, deadline (ms), address (host:port)
-- ARGV: [1] master id  [2] its RPC address  [3] lease ms  [4] events max length
--       [5] 'resign' to give the lease up (only if held), 'observe' to only report who holds it
--           (writes nothing; self is always false: a standby-only master never leads), else ''
-- Returns JSON: {r="OK", leader=<holder id or ''>, epoch, address, self=bool, deadline=ms}
EVENTS_MAXLEN = ARGV[4]
local K_LEADER = KEYS[CORE_KEYS + 1]
local me, address, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now_ms = now_parts()
local holder = redis.call('HGET', K_LEADER, 'holder')
local epoch = tonumber(redis.call('HGET', K_LEADER, 'epoch') or '0')
local deadline = tonumber(redis.call('HGET', K_LEADER, 'deadline') or '0')

if ARGV[5] == 'observe' then
  if holder and holder ~= '' and deadline > now_ms then
    return reply({r = 'OK', leader = holder, epoch = fmt(epoch), address = redis.call('HGET', K_LEADER, 'address') or '',
                  self = false, deadline = deadline})
  end
  return reply({r = 'OK', leader = '', epoch = fmt(epoch), address = '', self = false, deadline = 0})
end

if ARGV[5] == 'resign' then
  if holder == me then
    redis.call('HSET', K_LEADER, 'holder', '', 'deadline', '0', 'address', '')
    emit('master', {master = me, what = 'resigned', epoch = fmt(epoch), at = now_ms})
  end
  return reply({r = 'OK', leader = '', epoch = fmt(epoch), address = '', self = false, deadline = 0})
end

if holder == me and deadline > now_ms then
  deadline = now_ms + lease
  redis.call('HSET', K_LEADER, 'deadline', deadline, 'address', address)
  return reply({r = 'OK', leader = me, epoch = fmt(epoch), address = address, self = true, deadline = deadline})
end
if holder == nil or holder == '' or deadline <= now_ms then
  epoch = epoch + 1
  deadline = now_ms + lease
  redis.call('HSET', K_LEADER, 'holder', me, 'epoch', fmt(epoch), 'deadline', deadline, 'address', address)
  emit('master', {master = me, what = 'leader', epoch = fmt(epoch), previous = holder or '', at = now_ms})
  return reply({r = 'OK', leader = me, epoch = fmt(epoch), address = address, self = true, deadline = deadline})
end
return reply({r = 'OK', leader = holder, epoch = fmt(epoch), address = redis.call('HGET', K_LEADER, 'address') or '',
              self = false, deadline = deadline})
