#!/usr/bin/env python3
"""Redis CPU per task of a lean script set: what a redesign of the task record could reach.

An experiment, not the scheduler's scripts: the dispatch-throughput workload of lua_workload.py
(submit runs of --batch, one claim run for 4 workers of 16 tasks, ack and finish runs of --batch),
with scripts that do only what the four durable transitions need and no JSON: a task record as a
Redis HASH of its own, read and written field by field (HMGET of the fields checked, HSET of those
changed, history appended as text), the queue, the deadlines, the reservations, the owner and
terminal indexes, and one event stream entry per script run carrying all of its transitions. No
ASSIGNED/RUNNING indexes, no cancel or requeue paths, no idempotency keys: a floor, not a design.
Alternates with the real scripts (lua_workload.py's run) on the same redis-server and prints the
Redis CPU per task of both. Python 3 standard library only; use a redis-server nobody else uses.

  redis-server --port 7777 --save '' --appendonly no --daemonize yes
  python3 scripts/lua_floor.py --port 7777 --reps 6
  python3 scripts/lua_floor.py --port 7777 --ops     # single operations of the scheduler's scripts
"""
import argparse
import json
import importlib.util
import os
import statistics
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('lua_workload', os.path.join(HERE, 'lua_workload.py'))
lw = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lw)

PRE = r'''
local K_Q, K_DL, K_EV, K_SEQ, K_EP, K_SPECS, K_DONE, K_RES, P = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local now_s = string.format('%d', now)
local ev = {}
local function event(id, from, to, epoch, worker, reason)
  ev[#ev + 1] = id .. '|' .. from .. '|' .. to .. '|' .. epoch .. '|' .. worker .. '|' .. reason
end
local function flush()
  if #ev > 0 then redis.call('XADD', K_EV, 'MAXLEN', '~', '100000', '*', 'n', #ev, 'e', table.concat(ev, '\n')) end
end
'''
SUBMIT = PRE + r'''
local n = (#ARGV) / 3
local seq = redis.call('INCRBY', K_SEQ, n) - n
for i = 1, n do
  local id, prio, sp = ARGV[(i-1)*3+1], ARGV[(i-1)*3+2], ARGV[(i-1)*3+3]
  seq = seq + 1
  local s = string.format('%d', seq)
  if redis.call('HSETNX', P .. id, 'state', 'QUEUED') == 1 then
    redis.call('HSET', P .. id, 'seq', s, 'prio', prio, 'cpu', '1', 'mem', '0', 'gpus', '0', 'owner', 'bench', 'trace', 'tr',
               'attempt', '0', 'epoch', '0', 'max_attempts', '3', 'created', now_s, 'updated', now_s, 'history', 'Q' .. now_s)
    redis.call('HSET', K_SPECS, id, sp)
    redis.call('ZADD', K_Q, (999 - tonumber(prio)) * 1e12 + seq, id)
    redis.call('ZADD', P .. 'owner:bench', s, id)
    event(id, '', 'QUEUED', '0', '', 'submitted')
  end
end
flush()
return n
'''
CLAIM = PRE + r'''
local per = tonumber(ARGV[1])
local ids = redis.call('ZRANGE', K_Q, 0, per * (#ARGV - 1) - 1)
local ep = tonumber(redis.call('GET', K_EP) or '0')
local out, k = {}, 1
for w = 2, #ARGV do
  local worker = ARGV[w]
  for j = 1, per do
    local id = ids[k]; if not id then break end
    k = k + 1
    local st = redis.call('HMGET', P .. id, 'state', 'cpu', 'mem', 'gpus', 'attempt')
    if st[1] == 'QUEUED' then
      ep = ep + 1
      local e = string.format('%d', ep)
      redis.call('HSET', P .. id, 'state', 'ASSIGNED', 'epoch', e, 'worker', worker, 'attempt', tonumber(st[5]) + 1,
                 'deadline', now_s, 'updated', now_s)
      redis.call('HSET', K_RES .. worker, id, e .. '||1|0')
      redis.call('ZADD', K_DL, now + 600000, id)
      event(id, 'QUEUED', 'ASSIGNED', e, worker, 'claimed')
      out[#out + 1] = id .. ' ' .. e .. ' ' .. worker
    end
  end
end
if k > 1 then redis.call('ZREM', K_Q, unpack(ids, 1, k - 1)) end
redis.call('SET', K_EP, ep)
local specs = #out > 0 and redis.call('HMGET', K_SPECS, unpack(ids, 1, k - 1)) or {}
flush()
return table.concat(out, '\n')
'''
ACK = PRE + r'''
for i = 1, #ARGV, 3 do
  local id, e, worker = ARGV[i], ARGV[i+1], ARGV[i+2]
  local st = redis.call('HMGET', P .. id, 'state', 'epoch', 'worker')
  if st[1] == 'ASSIGNED' and st[2] == e and st[3] == worker then
    redis.call('HSET', P .. id, 'state', 'RUNNING', 'started', now_s, 'updated', now_s, 'deadline', now_s)
    redis.call('HSET', P .. id, 'history', redis.call('HGET', P .. id, 'history') .. ',R' .. now_s)
    redis.call('ZADD', K_DL, now + 3600000, id)
    event(id, 'ASSIGNED', 'RUNNING', e, worker, 'started')
  end
end
flush()
return 1
'''
FINISH = PRE + r'''
for i = 1, #ARGV, 3 do
  local id, e, worker = ARGV[i], ARGV[i+1], ARGV[i+2]
  local st = redis.call('HMGET', P .. id, 'state', 'epoch', 'worker', 'seq')
  if st[1] == 'RUNNING' and st[2] == e and st[3] == worker then
    redis.call('HSET', P .. id, 'state', 'SUCCEEDED', 'finished', now_s, 'updated', now_s, 'exit_code', '0', 'metrics', '{"final_reward":1.5}',
               'log_lines', '0')
    redis.call('HDEL', K_RES .. worker, id)
    redis.call('ZREM', K_DL, id)
    redis.call('ZADD', K_DONE, st[4], id)
    event(id, 'RUNNING', 'SUCCEEDED', e, worker, 'exited with code 0')
  end
end
flush()
return 1
'''

# --ops: what single operations of the scheduler's scripts cost inside a script run, each run N
# times in one run of a script that loads lib.lua as the scheduler's do, minus the same run without
# it, divided by N: EVALSHA time (INFO commandstats), microseconds.
OPS = [
    ('HGET of a task record', "for i=1,N do redis.call('HGET', K_TASKS, ARGV[2]) end"),
    ('load_task (HGET + cjson.decode)', "for i=1,N do load_task(ARGV[2]) end"),
    ('cjson.encode of the record', "local st=load_task(ARGV[2]); st.history=nil; for i=1,N do cjson.encode(st) end"),
    ('save_task (cjson.encode + HSET)', "local st=load_task(ARGV[2]); for i=1,N do save_task(st) end"),
    ('history entry (cjson.encode)', "for i=1,N do history_entry('1764546000123','RUNNING','SUCCEEDED','1764546000123456','w1','exited with code 0') end"),
    ('XADD of a task event (emit_task)', "for i=1,N do emit_task(ARGV[2], 'RUNNING','SUCCEEDED','1764546000123456','w1','1','exited with code 0','worker',1764546000123); flush_events() end"),
    ('4 task events in one entry, per event', "for i=1,N/4 do for j=1,4 do emit_task(ARGV[2], 'RUNNING','SUCCEEDED','1764546000123456','w1','1','exited with code 0','worker',1764546000123) end; flush_events() end"),
    ('ZADD + ZREM of a state index', "for i=1,N do redis.call('ZADD', K_STATE.RUNNING, '123456', ARGV[2]..i); redis.call('ZREM', K_STATE.RUNNING, ARGV[2]..i) end"),
    ('ZADD to the deadlines', "for i=1,N do redis.call('ZADD', K_DEADLINES, '1764546003600000', ARGV[2]..i) end"),
    # The record as a hash of its own instead (scripts/experiments/task-record-hash.patch): what its
    # commands cost, against cjson on the one JSON value. The hash {ops..}:tasks:<id> holds the
    # record's 27 fields as text (ops() writes it).
    ('cjson.decode of the record alone', "local raw=redis.call('HGET', K_TASKS, ARGV[2]); local j=string.sub(raw,1,string.find(raw,'\\n',1,true)-1); for i=1,N do cjson.decode(j) end"),
    ('cmsgpack.unpack of the record', "local st=load_task(ARGV[2]); st.history=nil; local m=cmsgpack.pack(st); for i=1,N do cmsgpack.unpack(m) end"),
    ('hash: HMGET of 6 fields', "local k=K_TASKS..':'..ARGV[2]; for i=1,N do redis.call('HMGET', k, 'state', 'epoch', 'worker', 'session', 'seq', 'attempt') end"),
    ('hash: HSET of 5 fields', "local k=K_TASKS..':'..ARGV[2]; for i=1,N do redis.call('HSET', k, 'state', 'RUNNING', 'updated_at', '1764546000125', 'reason', 'started on w1', 'started_at', '1764546000125', 'deadline', '1764546003600000') end"),
    ('hash: HSET of all 27 fields', "local k=K_TASKS..':'..ARGV[2]; local a={}; for f, v in pairs(cjson.decode(ARGV[3])) do a[#a+1]=f; a[#a+1]=v end; for i=1,N do redis.call('HSET', k, unpack(a)) end"),
    ('hash: APPEND a history entry', "local k=K_TASKS..':'..ARGV[2]..':history'; local e=history_entry('1764546000123','RUNNING','SUCCEEDED','1764546000123456','w1','exited with code 0'); for i=1,N do redis.call('APPEND', k..i, ','..e) end"),
]


def ops(r, n=200, reps=20):
    lib = open(os.path.join(lw.DEFAULT_LUA, 'lib.lua')).read()
    prefix = '{ops%s}:' % uuid.uuid4().hex[:8]
    keys = [prefix + k for k in ['tasks', 'specs', 'queue', 'workers', 'liveness', 'deadlines', 'epoch', 'seq', 'events']]
    keys += [prefix + 'state:' + s for s in lw.STATES]
    if 'K_SHAPES' in lib:
        keys.append(prefix + 'shapes')
    # A RUNNING task's record as the scripts store it: the record without history, a newline, the history.
    record = ('{"id":"m-0b8f6a8e-1f1e-4f5e-9d7a-3c1f7b1a2e44","state":"RUNNING","priority":"500","seq":"123456",'
              '"gpus":"0","cpu":"1","mem":"0","selector":{},"owner":"bench","trace":"%s","max_attempts":"3",'
              '"max_lease_losses":"2","attempt":"1","lease_losses":"0","epoch":"1764546000123456","worker":"w1",'
              '"session":"s%s","gpu_ids":"","deadline":"1764546003600000","cancel_requested":false,'
              '"created_at":"1764546000123","updated_at":"1764546000125","reason":"started on w1","error":"",'
              '"metrics":"","has_exit_code":false,"exit_code":"0","started_at":"1764546000125"}' % (uuid.uuid4().hex, uuid.uuid4().hex))
    history = '[' + ','.join('{"at":"1764546000123","from":"%s","to":"%s","epoch":"1764546000123456","worker":"w1",'
                             '"reason":"claimed by w1"}' % (a, b) for a, b in [('', 'QUEUED'), ('QUEUED', 'ASSIGNED'), ('ASSIGNED', 'RUNNING')]) + ']'
    task = 'm-0b8f6a8e-1f1e-4f5e-9d7a-3c1f7b1a2e44'
    r('HSET', keys[0], task, record + '\n' + history)
    fields = {k: ('1' if v is True else '0' if v is False else '{}' if v == {} else v) for k, v in json.loads(record).items() if k != 'id'}
    r('HSET', keys[0] + ':' + task, *[x for kv in fields.items() for x in kv])
    base = r('SCRIPT', 'LOAD', lib + '\nlocal N = tonumber(ARGV[1])\nreturn 1')
    try:
        for name, body in OPS:
            sha = r('SCRIPT', 'LOAD', lib + '\nlocal N = tonumber(ARGV[1])\n' + body + '\nreturn 1')
            got = []
            for _ in range(3):
                s0 = r.totals()[0].get('evalsha', (0, 0))[1]
                for _ in range(reps):
                    r('EVALSHA', sha, len(keys), *keys, str(n), task, json.dumps(fields))
                s1 = r.totals()[0].get('evalsha', (0, 0))[1]
                for _ in range(reps):
                    r('EVALSHA', base, len(keys), *keys, str(n), task, json.dumps(fields))
                s2 = r.totals()[0].get('evalsha', (0, 0))[1]
                got.append(((s1 - s0) - (s2 - s1)) / (reps * n))
            print('%-36s %.2f us (min of 3; all: %s)' % (name, min(got), ', '.join('%.2f' % g for g in got)))
    finally:
        r('DEL', *keys, keys[0] + ':' + task)
        cursor = '0'
        while True:
            cursor, found = r('SCAN', cursor, 'MATCH', keys[0] + ':*', 'COUNT', '1000')
            if found:
                r('DEL', *found)
            if cursor == '0':
                break


def run(r, tasks, batch, warmup):
    ns = '{fl%s}:' % uuid.uuid4().hex[:8]
    keys = [ns + k for k in ['queue', 'deadlines', 'events', 'seq', 'epoch', 'specs', 'state:SUCCEEDED', 'workers:res:', 't:']]
    sha = {n: r('SCRIPT', 'LOAD', src) for n, src in [('submit', SUBMIT), ('claim', CLAIM), ('ack', ACK), ('finish', FINISH)]}
    spec = '{"script":"noop.py","params":{},"cpu_slots":1,"gpus":0,"pad":"%s"}' % ('x' * 80)
    workers = ['w%d' % i for i in range(4)]
    def call(name, args):
        return r('EVALSHA', sha[name], len(keys), *keys, *args)
    def round_trip(n, tag):
        ids = ['%s-%s' % (tag, uuid.uuid4()) for _ in range(n)]
        for i in range(0, n, batch):
            args = []
            for t in ids[i:i + batch]:
                args += [t, '500', spec]
            call('submit', args)
        done = 0
        while done < n:
            got = call('claim', ['16'] + workers)
            assigned = [line.split(' ') for line in got.split('\n')] if got else []
            assert assigned
            for name in ('ack', 'finish'):
                for i in range(0, len(assigned), batch):
                    args = []
                    for t in assigned[i:i + batch]:
                        args += t
                    call(name, args)
            done += len(assigned)
        return ids
    made = []
    try:
        made += round_trip(warmup, 'warm')
        stats0, cpu0 = r.totals()
        made += round_trip(tasks, 'm')
        stats1, cpu1 = r.totals()
    finally:
        for i in range(0, len(made), 500):
            r('DEL', *[ns + 't:' + t for t in made[i:i + 500]])
        r('DEL', *keys[:7], ns + 'owner:bench', *[ns + 'workers:res:' + w for w in workers])
    delta = {k: v[0] - stats0.get(k, (0, 0))[0] for k, v in stats1.items()}
    return 1e6 * (cpu1 - cpu0) / tasks, sum(c for k, c in delta.items() if k != 'info') / tasks

def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--host', default='127.0.0.1')
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--tasks', type=int, default=3000, help='tasks measured per run')
    p.add_argument('--warmup', type=int, default=2000, help='tasks run first, not measured')
    p.add_argument('--batch', type=int, default=8, help='calls per submit, ack and finish run')
    p.add_argument('--reps', type=int, default=6, help='runs of each, alternating')
    p.add_argument('--ops', action='store_true', help='print what single operations of the scheduler\'s scripts cost instead')
    a = p.parse_args()
    r = lw.Redis(a.host, a.port)
    if a.ops:
        ops(r)
        return
    lean, real = [], []
    for _ in range(a.reps):
        cpu, lean_cmds = run(r, a.tasks, a.batch, a.warmup)
        lean.append(cpu)
        got = lw.run(r, lw.DEFAULT_LUA, a.tasks, a.batch, a.warmup)
        real.append(got['redis_cpu_us_per_task'])
        real_cmds = got['commands_per_task']
    for name, cpu, cmds in (('lean scripts', lean, lean_cmds), ('scheduler scripts', real, real_cmds)):
        cpu.sort()
        print('%s: Redis CPU us/task min %.1f median %.1f max %.1f; %.2f commands/task (%d runs)' % (
            name, cpu[0], statistics.median(cpu), cpu[-1], cmds, len(cpu)))


if __name__ == '__main__':
    main()
