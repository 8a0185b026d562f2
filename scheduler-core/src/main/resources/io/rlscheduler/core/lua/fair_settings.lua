-- fair_settings.lua: sets the half-life of usage and the minimum charge of an attempt (lib.lua,
-- "Sharing between owners"). Every owner's usage is first brought to now under the half-life it
-- was kept with, so that a new half-life applies from now on and changes no usage already decayed.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] half-life ms ('' to keep)  [2] minimum charge ms ('' to keep)
-- Returns JSON {r="OK", halflife_ms, min_charge_ms}
local now_ms = now_parts()
local sh = sharing()
local cfg = sh.fair_config(now_ms)
sh.rebase(cfg, now_ms)
if ARGV[1] ~= '' then
  cfg.h = tonumber(ARGV[1])
  redis.call('HSET', sh.K_FAIRCFG, 'halflife_ms', ARGV[1])
end
if ARGV[2] ~= '' then
  cfg.min = tonumber(ARGV[2])
  redis.call('HSET', sh.K_FAIRCFG, 'min_charge_ms', ARGV[2])
end
return reply({r = 'OK', halflife_ms = cfg.h, min_charge_ms = cfg.min})
