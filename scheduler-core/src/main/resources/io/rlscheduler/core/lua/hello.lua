-- hello.lua (read-only): what a master needs to judge a worker's hello: the session Redis holds
-- for the worker id with its liveness deadline, and the id's key record (worker_key.lua).
-- KEYS: the 17 core keys (lib.lua), then
--   KEYS[18] {ns}:worker-keys  HASH  worker id -> key record
-- ARGV: [1] worker id
-- Returns JSON: {r="OK", now=ms, session=the registered session or '' (no record),
--               deadline=its liveness deadline (ms, Redis clock; 0 without a record),
--               key=the key record (absent: none)}
local id = ARGV[1]
local out = {r = 'OK', now = now_parts(), session = '', deadline = 0}
local w = load_worker(id)
if w then
  out.session = w.session
  out.deadline = liveness_of(id)
end
local raw = redis.call('HGET', KEYS[CORE_KEYS + 1], id)
if raw then out.key = cjson.decode(raw) end
return reply(out)
