-- fair_settings.lua: sets the half-life of usage, the minimum charge of an attempt and how long a
-- big task waits before it gets a reservation (lib.lua, "Sharing between owners"). Every owner's
-- usage is first brought to now under the half-life it was kept with, so that a new half-life
-- applies from now on and changes no usage already decayed.
-- KEYS: the 17 core keys (lib.lua)
-- ARGV: [1] half-life ms ('' to keep)  [2] minimum charge ms ('' to keep)  [3] reserve-after ms,
--       0 for no reservations ('' to keep; 0 also ends those there are)
-- Returns JSON {r="OK", halflife_ms, min_charge_ms, reserve_after_ms}
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
if ARGV[3] ~= '' then
  cfg.reserve_after = tonumber(ARGV[3])
  redis.call('HSET', sh.K_FAIRCFG, 'reserve_after_ms', ARGV[3])
  if cfg.reserve_after == 0 then
    for worker in pairs(sh.reserved().worker) do sh.unreserve_worker(worker) end
  end
end
return reply({r = 'OK', halflife_ms = cfg.h, min_charge_ms = cfg.min, reserve_after_ms = cfg.reserve_after})
