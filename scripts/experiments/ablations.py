#!/usr/bin/env python3
"""What each per-task guarantee costs Redis: copies of the lease scripts with one guarantee taken out.

An experiment, not a configuration: each copy is WRONG as a scheduler (it loses lease expiry, GPU
reservations, the state indexes, the history or the events). It exists to be measured against
the real scripts with lua_workload.py, so that a decision about the throughput goal can weigh
what each guarantee costs. Writes, under OUT: base (the scripts as they are), one folder per
guarantee taken out, and all (every one of them taken out at once). Python 3 standard library only.

  python3 scripts/experiments/ablations.py /tmp/ablations
  python3 scripts/lua_workload.py --port 7777 --ab /tmp/ablations/base /tmp/ablations/no-deadlines --reps 6
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, '..', '..', 'scheduler-core', 'src', 'main', 'resources', 'io', 'rlscheduler', 'core', 'lua')

# name -> edits (file, text as it is, text instead); each text must occur exactly once.
ABLATIONS = {
    # The ASSIGNED and RUNNING indexes (listTasks of those states): 4 commands per task.
    'no-state-index': [('lib.lua',
                        "  if from ~= 'QUEUED' then redis.call('ZREM', K_STATE[from], st.id) end\n"
                        "  if to ~= 'QUEUED' then redis.call('ZADD', K_STATE[to], txt(st.seq), st.id) end",
                        "  if from ~= 'QUEUED' and from ~= 'ASSIGNED' and from ~= 'RUNNING' then"
                        " redis.call('ZREM', K_STATE[from], st.id) end\n"
                        "  if to ~= 'QUEUED' and to ~= 'ASSIGNED' and to ~= 'RUNNING' then"
                        " redis.call('ZADD', K_STATE[to], txt(st.seq), st.id) end")],
    # The record's history of transitions (but the one written at submit).
    'no-history': [('lib.lua',
                    "  local h = st.history\n  st.history = string.sub(h, 1, -2) .. (h == '[]' and '' or ',')\n"
                    "      .. history_entry(ms_text(now_ms), from, to, st.epoch, st.worker or '', reason or '') .. ']'\n",
                    '')],
    # The task events of the stream (what listeners, followers and the master's watcher read).
    'no-events': [('lib.lua',
                   'local function emit_task(id, from, to, epoch, worker, attempt, reason, via, at)\n',
                   'local function emit_task(id, from, to, epoch, worker, attempt, reason, via, at)\n'
                   '  if true then return end\n')],
    # The worker-side reservations (what keeps two tasks off one GPU): taken at claim, freed at finish.
    'no-reservations': [('claiming.lua', "            redis.call('HSET', K_RES, task_id, res_value(st))\n", ''),
                        ('finish.lua', '  release(st)\n', '')],
    # The deadlines index (how the reaper finds expired acknowledgements and task leases).
    'no-deadlines': [('claiming.lua', "            redis.call('ZADD', K_DEADLINES, st.deadline, task_id)\n", ''),
                     ('ack.lua', "  redis.call('ZADD', K_DEADLINES, st.deadline, st.id)\n", ''),
                     ('finish.lua', "  redis.call('ZREM', K_DEADLINES, st.id)\n", '')],
}


def variant(out, name, edits):
    folder = os.path.join(out, name)
    shutil.copytree(LUA, folder)
    for file, old, new in edits:
        path = os.path.join(folder, file)
        text = open(path).read()
        if text.count(old) != 1:
            sys.exit('%s: the text to replace in %s is not there once; the scripts changed since this was written'
                     % (name, file))
        open(path, 'w').write(text.replace(old, new))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    if os.path.exists(out):
        sys.exit('%s exists; give a new folder' % out)
    os.makedirs(out)
    variant(out, 'base', [])
    for name, edits in ABLATIONS.items():
        variant(out, name, edits)
    variant(out, 'all', [e for edits in ABLATIONS.values() for e in edits])
    print('written: ' + ', '.join(['base'] + list(ABLATIONS) + ['all']) + ' under ' + out)


if __name__ == '__main__':
    main()
