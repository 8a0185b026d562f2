-- worker_key.lua: stores the verifier of a worker's own key: its Ed25519 public key and the accept
-- key a master proves itself with, never the private key (only the worker holds that).
--   issue:  gives a worker id its key; refused while the id has one that is not revoked (rotate
--           it instead). Issuing for a revoked id lifts the revocation: do it for a new machine.
--   rotate: replaces the current key of an id that has one; from then on the old key is refused
--           at hello (a connection made with it stays up, its tasks go on).
-- Each publishes a worker event, what=key_issued or key_rotated, with the key id.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:worker-keys  HASH  worker id -> key record JSON: {worker, key_id, public (base64
--            X.509 Ed25519 public key), accept (base64 accept key), created_at, rotated_at,
--            revoked_at} (ms, Redis clock; 0: never). A revoked id without a key has key_id ''.
-- ARGV: [1] 'issue' or 'rotate'  [2] worker id  [3] key id  [4] public key  [5] accept key
--       [6] events max length
-- Returns JSON: {r="OK", key=record} | {r="EXISTS", key=record} (issue: the id has a key)
--             | {r="NO_KEY"} (rotate: none was issued) | {r="REVOKED", key=record} (rotate: revoked)
EVENTS_MAXLEN = ARGV[6]
local op, id = ARGV[1], ARGV[2]
local K_KEYS = KEYS[CORE_KEYS + 1]
local raw = redis.call('HGET', K_KEYS, id)
local k = raw and cjson.decode(raw)
local now_ms = now_parts()
if op == 'issue' then
  if k and k.revoked_at == 0 then return reply({r = 'EXISTS', key = k}) end
  k = {worker = id, created_at = now_ms, rotated_at = 0, revoked_at = 0}
elseif op == 'rotate' then
  if not k then return reply({r = 'NO_KEY'}) end
  if k.revoked_at > 0 then return reply({r = 'REVOKED', key = k}) end
  k.rotated_at = now_ms
else
  return redis.error_reply('worker_key.lua: unknown operation ' .. tostring(op))
end
k.key_id, k.public, k.accept = ARGV[3], ARGV[4], ARGV[5]
redis.call('HSET', K_KEYS, id, cjson.encode(k))
emit('worker', {worker = id, what = (op == 'issue') and 'key_issued' or 'key_rotated', key = k.key_id, at = now_ms})
return reply({r = 'OK', key = k})
