-- submit_claim.lua: one submission and, in the same run, a claim for the given workers: how a
-- leading master submits when its last claim left no claimable task queued and workers are connected, so that a
-- new task is assigned without a second script run (one round trip less from submit to start).
-- The submission is decided exactly as submit.lua decides it (idempotent by task id) and the
-- claim exactly as claim.lua (idempotent by request id: a replay answers the first claim answer,
-- and EXISTS for the submission).
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:owner:<owner>                ZSET    as submit.lua's
--   KEYS[19] {ns}:request:claim:<request id>   STRING  as claim.lua's KEYS[18]
--   KEYS[20] {ns}:leader                       HASH    as claim.lua's KEYS[19]
-- ARGV: [1] events max length, [2..12] the submission as submit.lua takes it (11 arguments), then
--       [13..] the claim's arguments as claim.lua takes them (7, then 2 per worker)
-- Returns JSON {"submit": <submit.lua's answer for the submission>, "claim": <claim.lua's answer>};
--   only {"submit": {r="LIMIT", ...}} when the submission is over its owner's limits (no claim ran)
-- libraries: submitting, parking, claiming
EVENTS_MAXLEN = ARGV[1]
local now_ms = now_parts()
local submitted
if redis.call('HEXISTS', K_TASKS, ARGV[2]) == 1 then
  submitted = {r = 'EXISTS'}
else
  submitted = submit_one(KEYS[CORE_KEYS + 1], 2, now_ms, ms_text(now_ms))
end
-- A submission over its owner's limits stored nothing: it claims nothing either (the caller raises).
if submitted.r == 'LIMIT' then return '{"submit":' .. reply(submitted) .. '}' end
local claimed = claim_run(KEYS[CORE_KEYS + 2], KEYS[CORE_KEYS + 3], 13)
if type(claimed) ~= 'string' then return claimed end
return '{"submit":' .. reply(submitted) .. ',"claim":' .. claimed .. '}'
