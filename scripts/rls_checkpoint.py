#!/usr/bin/env python3
"""Checkpoints that rl-scheduler commits to its artifact store and restores on any worker.

Standard library only. Copy this file next to your training script, or import it from here.

    import rls_checkpoint

    latest = rls_checkpoint.latest()          # the newest checkpoint directory, or None
    if latest:
        state = load(os.path.join(latest, "state.pt"))
    ...
    with rls_checkpoint.new() as d:           # a fresh, hidden directory
        save(os.path.join(d, "state.pt"))     # write as many files as you like
    # leaving the block renames it to ckpt-<n> and prints the line that marks it complete:
    #   RLS_CHECKPOINT {"path":"ckpt-000007"}

Why a new directory per checkpoint: the worker copies a marked checkpoint while the script goes
on training. A checkpoint that the script never touches again after marking it is always copied
whole; rewriting the files of a marked checkpoint in place would make the worker refuse it (it
checks every file's size and time after sending it). Older local checkpoint directories are
deleted here once newer ones exist (keep=2); the worker keeps what it needs on its own.

A single file written atomically (a temporary file renamed over it) needs none of this: print
mark() after each save and the whole directory is committed (scripts/train.py does that).

The worker restores the task's latest committed checkpoint into RLS_CHECKPOINT_DIR before the
script starts, so latest() finds it on whichever machine the run resumes.
"""

import json
import os
import re
import shutil
import sys

PREFIX = "RLS_CHECKPOINT"
_NAME = re.compile(r"^ckpt-(\d+)$")


def directory():
    """The checkpoint directory the worker gave this attempt (./checkpoints when run by hand)."""
    d = os.environ.get("RLS_CHECKPOINT_DIR") or "checkpoints"
    os.makedirs(d, exist_ok=True)
    return d


def mark(path=""):
    """Prints the line that marks a checkpoint complete: `path` (relative to the checkpoint
    directory) or, when empty, the whole directory."""
    line = PREFIX + " " + (json.dumps({"path": path}, separators=(",", ":")) if path else "{}")
    print(line, flush=True)
    return line


def _numbers(d):
    out = []
    for name in os.listdir(d):
        m = _NAME.match(name)
        if m and os.path.isdir(os.path.join(d, name)) and not os.path.islink(os.path.join(d, name)):
            out.append(int(m.group(1)))
    return sorted(out)


def latest():
    """The newest complete checkpoint directory (ckpt-<n>), or None."""
    d = directory()
    numbers = _numbers(d)
    return os.path.join(d, "ckpt-%06d" % numbers[-1]) if numbers else None


class new:
    """A context manager: a fresh hidden directory to save one checkpoint into; on a clean exit
    it is renamed to ckpt-<n> (the next number), marked, and older local ones beyond `keep` are
    deleted. On an exception the partial directory is removed and nothing is marked."""

    def __init__(self, keep=2):
        if keep < 1:
            raise ValueError("keep must be 1 or more")
        self.keep = keep
        self.dir = directory()
        numbers = _numbers(self.dir)
        self.number = (numbers[-1] + 1) if numbers else 1
        self.name = "ckpt-%06d" % self.number
        self.tmp = os.path.join(self.dir, ".tmp-" + self.name)

    def __enter__(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)
        return self.tmp

    def __exit__(self, kind, value, tb):
        if kind is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return False
        os.rename(self.tmp, os.path.join(self.dir, self.name))
        mark(self.name)
        for n in _numbers(self.dir)[:-self.keep]:
            shutil.rmtree(os.path.join(self.dir, "ckpt-%06d" % n), ignore_errors=True)
        return False


if __name__ == "__main__":
    # `python3 rls_checkpoint.py [path]` marks a checkpoint from a shell script.
    mark(sys.argv[1] if len(sys.argv) > 1 else "")
