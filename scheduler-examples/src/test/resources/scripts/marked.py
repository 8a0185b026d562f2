"""Test fixture for failure drills: prints numbered lines slowly, resumes from its own
checkpoint, and marks when each attempt started and stopped (by epoch) in a file shared by
all attempts, so a test can check that no two attempts ever ran at the same time.

Arguments: --lines N (default 40), --delay SECONDS (default 0.1).
"""
import os
import signal
import sys
import time

args = sys.argv[1:]
lines = int(args[args.index("--lines") + 1]) if "--lines" in args else 40
delay = float(args[args.index("--delay") + 1]) if "--delay" in args else 0.1
epoch = os.environ["RLS_EPOCH"]
ckpt_dir = os.environ["RLS_CHECKPOINT_DIR"]
marks = os.path.join(ckpt_dir, "marks.log")
progress = os.path.join(ckpt_dir, "progress")
printed = open(os.path.join(os.environ["RLS_RUN_DIR"], "printed.txt"), "a")


def mark(what):
    with open(marks, "a") as f:
        f.write("%s %s %.6f\n" % (what, epoch, time.time()))
        f.flush()
        os.fsync(f.fileno())


def on_term(signum, frame):
    mark("stop")
    os._exit(128 + signum)


signal.signal(signal.SIGTERM, on_term)
mark("start")
first = 1
if os.path.exists(progress):
    with open(progress) as f:
        first = int(f.read() or "0") + 1
    print("RESUMED from line %d" % first, flush=True)
for i in range(first, lines + 1):
    text = "line %d of epoch %s" % (i, epoch)
    try:
        print(text, flush=True)
    except OSError:
        pass  # nobody reads our output any more (an orphan): keep working, as a real run would
    printed.write(text + "\n")
    printed.flush()
    with open(progress + ".tmp", "w") as f:
        f.write(str(i))
    os.replace(progress + ".tmp", progress)
    time.sleep(delay)
mark("stop")
