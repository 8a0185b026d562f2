#!/usr/bin/env python3
"""The chaos run's task: real training (train.py, in-process) plus the evidence the chaos
checks need. Standard library only.

Checkpoints: train.py saves RLS_CHECKPOINT_DIR/checkpoint.json atomically (a temporary file
renamed over it) every --checkpoint-every episodes and at the end, and prints
"RLS_CHECKPOINT {}" after each save; the worker commits the directory to the artifact store and
restores the latest committed checkpoint into RLS_CHECKPOINT_DIR before a new attempt starts,
on whichever worker that is. The checkpoint directory therefore holds nothing but the
checkpoint: everything else this script writes goes to the attempt's own run directory.

Before training, one line says what the attempt found to resume from:

  chaos_task: resume point: episode <n> (checkpoint.json written by attempt <a>)
  chaos_task: resume point: none (no checkpoint.json)

and train.py's own "RESUMED from episode <n>" follows when it continues from there; the chaos
checks compare that count with the episode of the checkpoint the attempt should have resumed
from.

Each attempt appends marks to RLS_RUN_DIR/marks.log (its run directory, on its worker's own
disk; the chaos checks gather the marks of all attempts from every worker's run root), one line
each, fsynced:

  start <epoch> <unix time> <attempt> <pid>      before training starts
  stop <epoch> <unix time> <how>                 when the attempt stops: how is "exit=<code>"
                                                 after train.py returned (0: training done),
                                                 "signal=<n>" on SIGTERM/SIGINT/SIGHUP (the
                                                 launcher stopping the attempt), or
                                                 "error=<exception>" (e.g. BrokenPipeError when
                                                 the worker JVM died with the output pipe)

A SIGKILL leaves no stop mark; the launcher always sends SIGTERM first and waits its grace.

Everything the attempt writes to stdout and stderr is also written to
RLS_RUN_DIR/printed.txt, so the master's log file can be compared with what was printed.

Nothing is written beside the scripts (no bytecode cache): on a real cluster each machine has
its own copy of them, here all workers read the same directory.

Arguments are train.py's (--episodes, --episode-delay, --seed, ...), passed through.
"""
import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import train  # noqa: E402  (scripts/train.py, next to this file)

EPOCH = os.environ.get("RLS_EPOCH", "0")
ATTEMPT = os.environ.get("RLS_ATTEMPT", "0")
CK_DIR = os.environ.get("RLS_CHECKPOINT_DIR") or os.path.join("runs", "local", "checkpoints")
RUN_DIR = os.environ.get("RLS_RUN_DIR") or os.path.join("runs", "local", "run")
os.makedirs(CK_DIR, exist_ok=True)
os.makedirs(RUN_DIR, exist_ok=True)
MARKS = os.path.join(RUN_DIR, "marks.log")


def mark(*fields):
    line = " ".join(str(f) for f in fields) + "\n"
    fd = os.open(MARKS, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def resume_point():
    """The line saying what the checkpoint directory holds to resume from, as the worker left it."""
    path = os.path.join(CK_DIR, train.CHECKPOINT_NAME)
    try:
        with open(path, "r", encoding="utf-8") as f:
            ck = json.load(f)
    except FileNotFoundError:
        return "chaos_task: resume point: none (no %s)" % train.CHECKPOINT_NAME
    except (OSError, ValueError) as e:
        return "chaos_task: resume point: unreadable %s (%s)" % (train.CHECKPOINT_NAME, e)
    written_by = ck.get("written_by") if isinstance(ck.get("written_by"), dict) else {}
    return "chaos_task: resume point: episode %s (%s written by attempt %s)" % (
        ck.get("episode"), train.CHECKPOINT_NAME, written_by.get("attempt", "?"))


class Tee:
    """A text stream that writes to the real stream and to printed.txt."""

    def __init__(self, stream, copy):
        self.stream = stream
        self.copy = copy

    def write(self, text):
        n = self.stream.write(text)
        self.stream.flush()
        self.copy.write(text)
        self.copy.flush()
        return n

    def flush(self):
        self.stream.flush()
        self.copy.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def on_signal(signum, frame):
    mark("stop", EPOCH, "%.6f" % time.time(), "signal=%d" % signum)
    os._exit(128 + signum)


def main():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    printed = open(os.path.join(RUN_DIR, "printed.txt"), "a", encoding="utf-8")
    sys.stdout = Tee(sys.stdout, printed)
    sys.stderr = Tee(sys.stderr, printed)
    mark("start", EPOCH, "%.6f" % time.time(), ATTEMPT, os.getpid())
    try:
        print(resume_point(), flush=True)
        code = train.main(sys.argv[1:])
    except SystemExit as e:  # argparse: bad parameters
        code = e.code if isinstance(e.code, int) else 2
    except BaseException as e:  # e.g. BrokenPipeError: the worker JVM died with our stdout
        mark("stop", EPOCH, "%.6f" % time.time(), "error=%s" % type(e).__name__)
        raise
    sys.stdout.flush()
    sys.stderr.flush()
    # Signals from here on would only repeat the stop mark.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    mark("stop", EPOCH, "%.6f" % time.time(), "exit=%d" % (code or 0))
    return code or 0


if __name__ == "__main__":
    sys.exit(main())
