"""failover and resume benchmark task: a long-running task that marks each attempt's start.

Usage: python3 failover_task.py --marks DIR --seconds S [--checkpoint SOURCE]

At start it writes DIR/<task>-start-<epoch>.json: its epoch and attempt (RLS_EPOCH, RLS_ATTEMPT),
pid, process group (the launcher's), "started" (the wall-clock time this script began, its first
statement), "time" (when the mark was made), "earlier_groups_alive": the process groups of the
task's earlier attempts (from their own marks) that still have a live, non-zombie process now,
read from /proc (an empty list means that no earlier attempt was running when this one started),
and "checkpoint_files": the files in RLS_CHECKPOINT_DIR at start with their sizes (what a resume
restored). With --checkpoint, an attempt that finds its checkpoint directory empty hard-links
SOURCE's files into it and prints the line that marks the whole directory a checkpoint. Then it
prints a line every 0.1 s for S seconds and exits 0. Standard library only.
"""
import time

STARTED = time.time()

import json  # noqa: E402 (the start time comes first)
import os  # noqa: E402
import sys  # noqa: E402


def live_groups(pgids):
    """The pgids among `pgids` that have a live (not zombie) member, by /proc."""
    alive = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        fields = stat[stat.rindex(")") + 2:].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp in pgids and state not in ("Z", "X", "x"):
            alive.add(pgrp)
    return sorted(alive)


def main():
    args = sys.argv[1:]
    opts = dict(zip(args[0::2], args[1::2]))
    marks = opts["--marks"]
    seconds = float(opts["--seconds"])
    task = os.environ["RLS_TASK_ID"]
    epoch = os.environ["RLS_EPOCH"]
    earlier = []
    for name in os.listdir(marks):
        if name.startswith(task + "-start-") and name.endswith(".json"):
            with open(os.path.join(marks, name)) as f:
                earlier.append(json.load(f)["pgid"])
    checkpoint_dir = os.environ["RLS_CHECKPOINT_DIR"]
    found = {name: os.path.getsize(os.path.join(checkpoint_dir, name)) for name in sorted(os.listdir(checkpoint_dir))
             if os.path.isfile(os.path.join(checkpoint_dir, name))}
    mark = {"task": task, "epoch": int(epoch), "attempt": int(os.environ["RLS_ATTEMPT"]), "pid": os.getpid(),
            "pgid": os.getpgid(0), "started": STARTED, "time": time.time(), "earlier_groups": earlier,
            "earlier_groups_alive": live_groups(set(earlier)), "checkpoint_files": found}
    path = os.path.join(marks, "%s-start-%s.json" % (task, epoch))
    with open(path + ".tmp", "w") as f:
        json.dump(mark, f)
    os.replace(path + ".tmp", path)
    source = opts.get("--checkpoint")
    if source and not found:
        for name in sorted(os.listdir(source)):
            os.link(os.path.join(source, name), os.path.join(checkpoint_dir, name))
        print("RLS_CHECKPOINT {}", flush=True)
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        print("step %d of attempt %s" % (i, os.environ["RLS_ATTEMPT"]), flush=True)
        time.sleep(0.1)


if __name__ == "__main__":
    main()
