"""Test fixture: a trainer that saves checkpoints but never prints RLS_CHECKPOINT (as third-party
trainers do). It writes state.txt in RLS_CHECKPOINT_DIR, holds still for --hold seconds, writes it
again and exits at once.
"""
import os
import sys
import time

args = sys.argv[1:]
hold = float(args[args.index("--hold") + 1]) if "--hold" in args else 1.5
path = os.path.join(os.environ["RLS_CHECKPOINT_DIR"], "state.txt")


def save(text):
    tmp = os.path.join(os.path.dirname(path), ".state.txt.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


save("step 1")
print("saved step 1", flush=True)
time.sleep(hold)
save("step 2")
print("saved step 2; done", flush=True)
