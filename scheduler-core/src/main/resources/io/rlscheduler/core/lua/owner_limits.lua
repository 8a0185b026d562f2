-- owner_limits.lua: sets or clears one owner's limits, or the lab's defaults (owner '*'), and puts
-- the owners it concerns into or out of the claims' fair sets at once (lib.lua, "Sharing between
-- owners"): a raised limit lets the next claim start the owner's tasks, a lowered one stops no
-- running task. Announced on the event stream (type=owner), so that masters claim again.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] owner, or '*' for the defaults  [2] limits JSON (names as LIMIT_NAMES; absent: unset),
--       or '' to clear  [3] events max length
-- Returns JSON {r="OK"}
EVENTS_MAXLEN = ARGV[3]
local owner, json = ARGV[1], ARGV[2]
local sh = sharing()
if json == '' then
  redis.call('HDEL', sh.K_LIMITS, owner)
else
  redis.call('HSET', sh.K_LIMITS, owner, json)
end
sh.clear_limits()
if owner == '*' then
  for _, o in ipairs(redis.call('SMEMBERS', sh.K_OWNERS)) do sh.refresh_owner(o) end
else
  sh.refresh_owner(owner)
end
emit('owner', {owner = owner, what = 'limits', at = now_parts()})
return reply({r = 'OK'})
