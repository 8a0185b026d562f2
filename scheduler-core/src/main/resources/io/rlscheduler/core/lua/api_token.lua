-- api_token.lua: the HTTP API's bearer tokens. Redis keeps each token's SHA-256, never the token.
--   create: stores a new token's record under its hash; refused if the id or the hash is taken.
--   revoke: removes a token by its id; the next request that shows it is refused.
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:api-tokens     HASH  SHA-256 of the token (hex) -> record JSON: {id, user,
--            admin, created_at (ms, Redis clock)}
--   KEYS[19] {ns}:api-token-ids  HASH  token id -> SHA-256 of the token (hex)
-- ARGV: [1] 'create' or 'revoke'  [2] token id  [3] hash (create)  [4] user (create)
--       [5] '1' for an admin token (create)
-- Returns JSON: {r="OK", token=record} | {r="EXISTS"} (create) | {r="NONE"} (revoke: no such id)
local op, id = ARGV[1], ARGV[2]
local K_TOKENS, K_IDS = KEYS[CORE_KEYS + 1], KEYS[CORE_KEYS + 2]
if op == 'create' then
  local hash = ARGV[3]
  if redis.call('HEXISTS', K_IDS, id) == 1 or redis.call('HEXISTS', K_TOKENS, hash) == 1 then
    return reply({r = 'EXISTS'})
  end
  local record = {id = id, user = ARGV[4], admin = ARGV[5] == '1', created_at = now_parts()}
  redis.call('HSET', K_TOKENS, hash, cjson.encode(record))
  redis.call('HSET', K_IDS, id, hash)
  return reply({r = 'OK', token = record})
elseif op == 'revoke' then
  local hash = redis.call('HGET', K_IDS, id)
  if not hash then return reply({r = 'NONE'}) end
  local raw = redis.call('HGET', K_TOKENS, hash)
  redis.call('HDEL', K_IDS, id)
  redis.call('HDEL', K_TOKENS, hash)
  return reply({r = 'OK', token = raw and cjson.decode(raw) or {id = id}})
end
return redis.error_reply('api_token.lua: unknown operation ' .. tostring(op))
