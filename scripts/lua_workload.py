#!/usr/bin/env python3
"""Redis CPU per task of the lease scripts alone: the dispatch-throughput workload without a JVM.

Runs the real scripts of scheduler-core (lib.lua and their libraries prepended, as LuaScript does) against a
redis-server of your own: 4 workers of 64 CPU slots register, then each round submits tasks in
runs of --batch calls, claims for all 4 workers at once (16 tasks each at most, like the master's
dispatch rounds), acknowledges and finishes them as SUCCEEDED, again in runs of --batch calls,
with each attempt's provenance as the tree's worker stores it (in the end's run, or alone).
Prints, per task, Redis's CPU time (INFO cpu), EVALSHA time and commands run (INFO commandstats).

The figures are server-wide: use a redis-server nobody else uses (it never calls CONFIG RESETSTAT:
it reads totals before and after). Its keys live in a fresh namespace {lw<random>}, deleted
afterwards but for the claims' answers, which expire after 10 minutes. Python 3 standard library
only. Noisy on a shared machine: compare with --ab, which alternates runs, and read the minimum.
With --ab, each run starts by emptying the server's script cache (SCRIPT FLUSH) and loading every
script of its folder, as a scheduler's Redis holds them: what a script run costs grows with the
compiled scripts in Redis's Lua heap. Loading leaves garbage that Lua's collector clears over the
next few thousand runs: with --ab, give --warmup 6000 (runs of 8) or 3000 (--batch 1). A run
without --ab leaves the script cache as it finds it, so its figures depend on what is cached.

  redis-server --port 7777 --save '' --appendonly no --daemonize yes
  python3 scripts/lua_workload.py --port 7777                          # the scripts of this tree
  python3 scripts/lua_workload.py --port 7777 --ab /tmp/lua-old scheduler-core/src/main/resources/io/rlscheduler/core/lua --reps 12
  python3 scripts/lua_workload.py --port 7777 --renewals --ab /tmp/lua-old scheduler-core/src/main/resources/io/rlscheduler/core/lua

With --renewals, "task" in the figures reads "renewal": 1,000 idle workers register, then each run
renews their liveness --tasks times in turn (after --warmup renewals).
"""
import argparse
import json
import os
import re
import socket
import statistics
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LUA = os.path.join(HERE, '..', 'scheduler-core', 'src', 'main', 'resources', 'io', 'rlscheduler', 'core', 'lua')
STATES = ['QUEUED', 'ASSIGNED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMED_OUT']


class Redis:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port))
        self.file = self.sock.makefile('rb')

    @staticmethod
    def _encode(args):
        out = [b'*%d\r\n' % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b'$%d\r\n%s\r\n' % (len(a), a))
        return b''.join(out)

    def _read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b'+':
            return rest.decode()
        if kind == b'-':
            raise RuntimeError(rest.decode())
        if kind == b':':
            return int(rest)
        if kind == b'$':
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode()
        if kind == b'*':
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RuntimeError('unexpected reply %r' % line)

    def __call__(self, *args):
        self.sock.sendall(self._encode(args))
        return self._read()

    def totals(self):
        stats = {}
        for line in self('INFO', 'commandstats').splitlines():
            if line.startswith('cmdstat_'):
                name, values = line.split(':', 1)
                kv = dict(x.split('=') for x in values.split(','))
                stats[name[8:]] = (int(kv['calls']), int(kv['usec']))
        cpu = dict(l.split(':', 1) for l in self('INFO', 'cpu').splitlines() if ':' in l)
        return stats, float(cpu['used_cpu_sys']) + float(cpu['used_cpu_user'])


def lua_identifiers(text):
    """Every identifier of Lua source outside comments and string literals, as LuaUnits.identifiers finds them."""
    out, i, n = set(), 0, len(text)

    def long_bracket(at):
        if at >= n or text[at] != '[':
            return -1
        j = at + 1
        while j < n and text[j] == '=':
            j += 1
        return j - at - 1 if j < n and text[j] == '[' else -1

    def close(at, level):
        end = text.find(']' + '=' * level + ']', at)
        return n if end < 0 else end + level + 2

    while i < n:
        c = text[i]
        if text.startswith('--', i):
            level = long_bracket(i + 2)
            if level >= 0:
                i = close(i + 4 + level, level)
            else:
                eol = text.find('\n', i)
                i = n if eol < 0 else eol + 1
        elif c == '[' and long_bracket(i) >= 0:
            level = long_bracket(i)
            i = close(i + level + 2, level)
        elif c in '\'"':
            i += 1
            while i < n and text[i] != c and text[i] != '\n':
                i += 2 if text[i] == '\\' else 1
            i += 1
        elif c in NAME_START:
            start = i
            while i < n and text[i] in NAME_CHARS:
                i += 1
            out.add(text[start:i])
        elif c in DIGITS or (c == '.' and i + 1 < n and text[i + 1] in DIGITS):
            # Lua 5.1's read_numeral: digits and dots, an exponent's sign, then letters, digits, '_'.
            while i < n and (text[i] in DIGITS or text[i] == '.'):
                i += 1
            if i < n and text[i] in 'eE':
                i += 1
                if i < n and text[i] in '+-':
                    i += 1
            while i < n and text[i] in NAME_CHARS:
                i += 1
        else:
            i += 1
    return out


NAME_START = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_')
DIGITS = frozenset('0123456789')
NAME_CHARS = NAME_START | DIGITS


LOCAL_FUNCTION = re.compile(r'^local\s+function\s+([A-Za-z_][A-Za-z0-9_]*)')
LOCAL_NAMES = re.compile(r'^local\s+([A-Za-z_][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z_][A-Za-z0-9_]*)*)')
CLOSER = re.compile(r'^(end|}|\)|\]|end\)|}\))\s*(--.*)?$')


def lua_units(text):
    """The top-level units of lib.lua or a library, as LuaUnits.split cuts them: (names, text, identifiers). The
    layout LuaUnits refuses is not checked here: a tree whose loader refuses its scripts has no figures to take."""
    groups, current = [], []
    for line in text.split('\n'):
        starts = line.startswith('local ') or (line != '' and not line[0].isspace() and not line.startswith('--')
                                                and not CLOSER.match(line))
        if starts and current:
            groups.append(current)
            current = []
        current.append(line)
    if current:
        groups.append(current)
    units = []
    for lines in groups:
        first = next((l for l in lines if not l.startswith('--') and l.strip()), '')
        m = LOCAL_FUNCTION.match(first)
        names = {m.group(1)} if m else set()
        if not m:
            m = LOCAL_NAMES.match(first)
            names = {x.strip() for x in m.group(1).split(',')} if m else set()
            if m and first[m.end():].strip().startswith(','):
                raise ValueError('a top-level local declaration must name its locals on one line: ' + first)
        body = '\n'.join(lines)
        units.append((names, body, lua_identifiers(body)))
    return units


def lua_reached(units, body):
    """The units body reaches, directly or through others, and those of no names, in order (LuaUnits.reached)."""
    needed = set(lua_identifiers(body))
    keep = [False] * len(units)
    changed = True
    while changed:
        changed = False
        for i, (names, _, refs) in enumerate(units):
            if not keep[i] and (not names or names & needed):
                keep[i] = True
                needed |= refs
                changed = True
    return ''.join(u[1] + '\n' for i, u in enumerate(units) if keep[i])


def source(lua_dir, name):
    """A script as LuaScript.load builds it: lib.lua, the libraries its '-- libraries:' header line names, the
    script as a function's body and the epilogue that calls it, brings its owners' fair sets up to date and
    writes its task events; of lib.lua and the libraries only the units the script reaches, where the tree's
    loader keeps only those (lib.lua says so: LuaUnits)."""
    script = open(os.path.join(lua_dir, name + '.lua')).read()
    parts = [open(os.path.join(lua_dir, 'lib.lua')).read()]
    for line in script.split('\n'):
        if not line.startswith('--'):
            break
        if line.startswith('-- libraries:'):
            parts += [open(os.path.join(lua_dir, lib.strip() + '.lua')).read() for lib in line[len('-- libraries:'):].split(',')]
    if 'local function flush_events()' not in parts[0]:
        return '\n'.join(parts + [script])  # an older tree's scripts (--ab), without per-run event buffering
    # The body as a function, then the epilogue that writes its buffered task events.
    # lib.lua's flush_owners (the owners' fair sets, once per run) where the tree has it.
    owners = ['flush_owners()'] if 'local function flush_owners()' in parts[0] else []
    body = ['local function run_body()', script, 'end', 'local body_ok, body_result = pcall(run_body)'] + owners + [
        'flush_events()', 'if not body_ok then error(body_result, 0) end', 'return body_result']
    if '(LuaUnits)' in parts[0]:
        body_text = '\n'.join(body) + '\n'
        return lua_reached([u for p in parts for u in lua_units(p)], body_text) + body_text
    return '\n'.join(parts + body)


def evalsha_usec(redis):
    for line in redis('INFO', 'commandstats').splitlines():
        if line.startswith('cmdstat_evalsha:'):
            return int(line.split('usec=')[1].split(',')[0])
    return 0


def run(redis, lua_dir, tasks, batch, warmup, by_script=False, owners=1, limits=False):
    ns = 'lw' + uuid.uuid4().hex[:8]
    prefix = '{%s}:' % ns
    core = [prefix + k for k in ['tasks', 'specs', 'queue', 'workers', 'liveness', 'deadlines', 'epoch', 'seq', 'events']]
    core += [prefix + 'state:' + s for s in STATES]
    if 'K_SHAPES' in source(lua_dir, 'lib'):
        core.append(prefix + 'shapes')  # the 17th core key, in trees since parking
    # Each attempt's provenance, as a worker running a no-op in-JVM task sends it: with the end's run where the
    # tree's finish.lua stores it, else in a provenance.lua run of its own (trees since provenance, before that
    # none).
    with_end = 'k_provenance' in open(os.path.join(lua_dir, 'finish.lua')).read()
    alone = not with_end and os.path.exists(os.path.join(lua_dir, 'provenance.lua'))
    names_run = ['submit', 'register', 'claim', 'ack', 'finish'] + (['provenance'] if alone else [])
    sha = {n: redis('SCRIPT', 'LOAD', source(lua_dir, n)) for n in names_run}
    names = ['bench'] if owners == 1 else ['bench%d' % i for i in range(owners)]
    if limits:
        # --limits: every limit set for every owner, high enough to stop nothing (owner_limits.lua).
        limits_sha = redis('SCRIPT', 'LOAD', source(lua_dir, 'owner_limits'))
        for i, o in enumerate(names):
            limit = {'max_gpus': 1000, 'max_running': 100000, 'max_queued': 1000000, 'max_gpus_per_task': 8,
                     'rate': 1000000.0, 'burst': 1000000, 'weight': 1.0 + i % 3}
            redis('EVALSHA', limits_sha, len(core), *core, o, json.dumps(limit), '100000')
    # finish.lua takes the attempt's output line count as a tenth argument since it stores log_lines.
    finish_extra = ['0'] if 'log_lines' in source(lua_dir, 'finish') else []

    per_script = {}
    measuring = [False]

    def script(name, keys, args):
        if not (by_script and measuring[0]):
            return json.loads(redis('EVALSHA', sha[name], len(keys), *keys, *args))
        # --by-script: EVALSHA time of this one call, from commandstats before and after it.
        before = evalsha_usec(redis)
        answer = redis('EVALSHA', sha[name], len(keys), *keys, *args)
        per_script[name] = per_script.get(name, 0) + evalsha_usec(redis) - before
        return json.loads(answer)

    spec = json.dumps({'script': 'noop.py', 'params': {}, 'cpu_slots': 1, 'gpus': 0, 'pad': 'x' * 80})
    workers = [('w%d' % i, 's' + uuid.uuid4().hex) for i in range(4)]
    # register.lua takes the worker keys' hash as an 18th key since worker keys.
    register_keys = core + ([prefix + 'worker-keys'] if 'worker-keys' in open(os.path.join(lua_dir, 'register.lua')).read()
                            or 'K_WORKER_KEYS' in source(lua_dir, 'register') else [])
    for w, s in workers:
        script('register', register_keys, [w, s, '{}', '64', '0', '', '3600000', '100000'])

    def provenance(t):
        return json.dumps({'epoch': t[1], 'worker': t[2], 'host': 'bench-host', 'gpus': []}, separators=(',', ':'))

    def round_trip(n, tag):
        ids = ['%s-%s' % (tag, uuid.uuid4()) for _ in range(n)]
        for i in range(0, n, batch):
            chunk = ids[i:i + batch]
            args = ['100000']
            owner_keys = []
            for j, t in enumerate(chunk):
                o = names[(i + j) % len(names)]
                args += [t, '500', '0', '1', '0', '{}', o, uuid.uuid4().hex, '3', '2', spec]
                owner_keys.append(prefix + 'owner:' + o)
            answers = script('submit', core + owner_keys, args)
            assert all(a['r'] == 'OK' for a in answers), answers
        done = 0
        while done < n:
            args = ['16', '100', '3600000', '600000', '100000', '', '']
            for w, s in workers:
                args += [w, s]
            claim = script('claim', core + [prefix + 'request:claim:' + uuid.uuid4().hex, prefix + 'leader'], args)
            assigned = [(t['id'], t['epoch'], w, s) for (w, s), a in zip(workers, claim['workers']) for t in a['tasks']]
            assert assigned, claim
            for i in range(0, len(assigned), batch):
                args = ['3600000', '100000']
                for t in assigned[i:i + batch]:
                    args += list(t)
                answers = script('ack', core, args)
                assert all(a['r'] == 'OK' for a in answers), answers
            if alone:
                for i in range(0, len(assigned), batch):
                    chunk = assigned[i:i + batch]
                    args = []
                    for t in chunk:
                        args += list(t) + [provenance(t)]
                    answers = script('provenance', core + [prefix + 'provenance:' + t[0] for t in chunk], args)
                    assert all(a['r'] == 'OK' for a in answers), answers
            for i in range(0, len(assigned), batch):
                chunk = assigned[i:i + batch]
                args = ['100000']
                for t in chunk:
                    args += list(t) + ['SUCCEEDED', '0', '', '{"final_reward":1.5}', ''] + finish_extra
                    if with_end:
                        args.append(provenance(t))
                extra = [prefix + 'provenance:' + t[0] for t in chunk] if with_end else []
                answers = script('finish', core + extra, args)
                assert all(a['r'] == 'OK' for a in answers), answers
            done += len(assigned)

    try:
        round_trip(warmup, 'warm')
        stats0, cpu0 = redis.totals()
        measuring[0] = True
        round_trip(tasks, 'm')
        measuring[0] = False
        stats1, cpu1 = redis.totals()
    finally:
        keys = core + [prefix + 'owner:' + o for o in names] + [prefix + 'worker-keys'] + [
            prefix + 'workers:res:' + w for w, _ in workers]
        redis('DEL', *keys)
        # Keys of each task's own, should the scripts under test write any (a task record as a
        # hash per task does, see commit b7da5e4).
        # And each task's provenance hash.
        for pattern in ['tasks:*', 'provenance:*']:
            cursor = '0'
            while True:
                cursor, found = redis('SCAN', cursor, 'MATCH', prefix + pattern, 'COUNT', '1000')
                if found:
                    redis('DEL', *found)
                if cursor == '0':
                    break
    delta = {k: (v[0] - stats0.get(k, (0, 0))[0], v[1] - stats0.get(k, (0, 0))[1]) for k, v in stats1.items()}
    commands = sum(c for k, (c, _) in delta.items() if k != 'info')
    return {'redis_cpu_us_per_task': 1e6 * (cpu1 - cpu0) / tasks,
            'evalsha_us_per_task': delta.get('evalsha', (0, 0))[1] / tasks,
            'commands_per_task': commands / tasks,
            'evalsha_us_per_task_by_script': {k: v / tasks for k, v in per_script.items()}}


def renewals(redis, lua_dir, count, warmup, batch, workers=1000):
    """--renewals: Redis CPU per liveness renewal of idle workers (no task held), as the heartbeats
    benchmark's workers send them: the bare renew.lua where the tree has it, else heartbeat.lua;
    --batch renewals a run where renew.lua takes several (one a run where it takes one)."""
    ns = 'lw' + uuid.uuid4().hex[:8]
    prefix = '{%s}:' % ns
    core = [prefix + k for k in ['tasks', 'specs', 'queue', 'workers', 'liveness', 'deadlines', 'epoch', 'seq', 'events']]
    core += [prefix + 'state:' + s for s in STATES]
    if 'K_SHAPES' in source(lua_dir, 'lib'):
        core.append(prefix + 'shapes')
    register_keys = core + [prefix + 'worker-keys']
    register = redis('SCRIPT', 'LOAD', source(lua_dir, 'register'))
    bare = os.path.exists(os.path.join(lua_dir, 'renew.lua'))
    batched = False
    if bare:
        text = open(os.path.join(lua_dir, 'renew.lua')).read()
        batched = '2 per renewal' in text
        renew = redis('SCRIPT', 'LOAD', text)
    else:
        renew = redis('SCRIPT', 'LOAD', source(lua_dir, 'heartbeat'))
    ids = [('w%05d' % i, 's' + uuid.uuid4().hex) for i in range(workers)]
    labels = json.dumps({'zone': 'a', 'gpu': 'h100'})
    for w, sess in ids:
        redis('EVALSHA', register, len(register_keys), *register_keys, w, sess, labels, '8', str(64 << 30), '0,1', '3000',
              '100000')

    def beat(n):
        if batched:
            for i in range(0, n, batch):
                args = []
                for j in range(i, min(n, i + batch)):
                    args += ids[j % workers]
                answers = json.loads(redis('EVALSHA', renew, 2, prefix + 'workers', prefix + 'liveness', '3000', *args))
                assert all(x['r'] == 'OK' for x in answers), answers
            return
        for i in range(n):
            w, sess = ids[i % workers]
            if bare:
                answer = redis('EVALSHA', renew, 2, prefix + 'workers', prefix + 'liveness', w, sess, '3000')
            else:
                answer = redis('EVALSHA', renew, len(core), *core, w, sess, '3000', '30000', '100000')
            assert json.loads(answer)['r'] == 'OK', answer

    try:
        beat(warmup)
        stats0, cpu0 = redis.totals()
        beat(count)
        stats1, cpu1 = redis.totals()
    finally:
        redis('DEL', *(core + [prefix + 'worker-keys', prefix + 'workers:beat']))
    delta = {k: (v[0] - stats0.get(k, (0, 0))[0], v[1] - stats0.get(k, (0, 0))[1]) for k, v in stats1.items()}
    commands = sum(c for k, (c, _) in delta.items() if k != 'info')
    return {'redis_cpu_us_per_task': 1e6 * (cpu1 - cpu0) / count,
            'evalsha_us_per_task': delta.get('evalsha', (0, 0))[1] / count,
            'commands_per_task': commands / count,
            'evalsha_us_per_task_by_script': {}}


def libraries(lua_dir):
    """lib.lua and the libraries the scripts of lua_dir name in their '-- libraries:' header lines."""
    names = {'lib'}
    for f in os.listdir(lua_dir):
        if f.endswith('.lua'):
            for line in open(os.path.join(lua_dir, f)).read().split('\n'):
                if not line.startswith('--'):
                    break
                if line.startswith('-- libraries:'):
                    names |= {x.strip() for x in line[len('-- libraries:'):].split(',')}
    return names


def load_all(redis, lua_dir):
    """Empties the script cache and loads every script of lua_dir into it, as a long-running scheduler's Redis holds
    them (the core loads most up front, the others at their first use): a run's cost grows with the compiled scripts
    in Redis's Lua heap, so each side of --ab runs with its own set only."""
    redis('SCRIPT', 'FLUSH')
    skip = libraries(lua_dir)
    for f in sorted(os.listdir(lua_dir)):
        if not f.endswith('.lua') or f[:-4] in skip:
            continue
        name = f[:-4]
        # renew.lua runs bare (LuaScript.loadBare); the others with the prelude.
        text = open(os.path.join(lua_dir, f)).read() if name == 'renew' else source(lua_dir, name)
        redis('SCRIPT', 'LOAD', text)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--host', default='127.0.0.1')
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--lua', default=DEFAULT_LUA, help='folder of the scripts (default: this tree\'s)')
    p.add_argument('--ab', nargs=2, metavar=('A', 'B'),
                   help='two script folders, run alternately, each with only its own scripts in the script cache '
                        '(SCRIPT FLUSH, then every script of the folder loaded, before each run)')
    p.add_argument('--reps', type=int, default=8, help='runs of each with --ab')
    p.add_argument('--tasks', type=int, default=3000, help='tasks measured per run')
    p.add_argument('--warmup', type=int, default=2000, help='tasks run first, not measured')
    p.add_argument('--batch', type=int, default=8, help='calls per submit, ack and finish run (the bench sees about 8); with --renewals, renewals per run')
    p.add_argument('--owners', type=int, default=1, help='owners the tasks are spread over, in turn')
    p.add_argument('--limits', action='store_true', help='every owner has every limit set (none of them binding)')
    p.add_argument('--by-script', action='store_true',
                   help='also EVALSHA time per task of each script (an INFO call around every script call, not counted '
                        'in EVALSHA time but in Redis CPU: compare the by-script figures, not the CPU, of such runs)')
    p.add_argument('--renewals', action='store_true',
                   help='measure liveness renewals of 1,000 idle workers instead of tasks (--tasks renewals per run; '
                        'figures per renewal)')
    a = p.parse_args()
    redis = Redis(a.host, a.port)

    def run_one(lua_dir):
        if a.ab:
            load_all(redis, lua_dir)
        if a.renewals:
            return renewals(redis, lua_dir, a.tasks, a.warmup, a.batch)
        return run(redis, lua_dir, a.tasks, a.batch, a.warmup, a.by_script, a.owners, a.limits)

    if not a.ab:
        r = run_one(a.lua)
        print('Redis CPU %.1f us/task, EVALSHA %.1f us/task, %.2f commands/task' % (
            r['redis_cpu_us_per_task'], r['evalsha_us_per_task'], r['commands_per_task']))
        if a.by_script:
            print('EVALSHA us/task by script: ' + ', '.join(
                '%s %.1f' % kv for kv in r['evalsha_us_per_task_by_script'].items()))
        return
    results = {0: [], 1: []}
    for _ in range(a.reps):
        for i, d in enumerate(a.ab):
            results[i].append(run_one(d))
    for i, d in enumerate(a.ab):
        cpu = sorted(r['redis_cpu_us_per_task'] for r in results[i])
        evalsha = sorted(r['evalsha_us_per_task'] for r in results[i])
        print('%s: Redis CPU us/task min %.1f p25 %.1f median %.1f; EVALSHA median %.1f; %.2f commands/task (%d runs)' % (
            'AB'[i], cpu[0], cpu[len(cpu) // 4], statistics.median(cpu), statistics.median(evalsha),
            results[i][0]['commands_per_task'], len(cpu)))
        if a.by_script:
            names = results[i][0]['evalsha_us_per_task_by_script'].keys()
            print('   EVALSHA us/task by script, median: ' + ', '.join('%s %.1f' % (
                n, statistics.median(r['evalsha_us_per_task_by_script'][n] for r in results[i])) for n in names))


if __name__ == '__main__':
    main()
