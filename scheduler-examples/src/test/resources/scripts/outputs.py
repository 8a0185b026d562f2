"""Test fixture for run outputs: writes files into its run directory as a training run would,
or hostile entries, or many files, then exits with the code asked for.

Arguments:
  --exit N              exit code (default 0)
  --training            a TensorBoard-like events file, a plot and a model file
  --hostile             links to /etc and to directories outside the run directory, names with a
                        newline and a backslash, a fifo, and one plain file
  --tiny N              N tiny files under tiny/
  --big BYTES           one file big.bin of BYTES bytes, and a small model file
  --sleep-first S       sleep S seconds after writing, in the first attempt only
"""
import os
import struct
import sys
import time

args = sys.argv[1:]


def arg(name, default=None):
    return args[args.index(name) + 1] if name in args else default


run_dir = os.environ["RLS_RUN_DIR"]
os.chdir(run_dir)


def write(path, data):
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


if "--training" in args:
    # TensorBoard's record framing: length, a CRC slot, the event bytes, a CRC slot.
    events = b"".join(struct.pack("<Q", 24) + b"\0" * 4 + os.urandom(24) + b"\0" * 4 for _ in range(200))
    write("tb/events.out.tfevents.1700000000.host", events)
    write("plots/reward.png", b"\x89PNG\r\n\x1a\n" + os.urandom(20000))
    write("model.pt", os.urandom(3 * 1024 * 1024 + 17))

if "--hostile" in args:
    write("ok.txt", b"the one plain file\n")
    os.symlink("/etc", "etc")
    os.symlink("/etc/passwd", "passwd")
    os.symlink(os.path.dirname(run_dir), "task-dir")
    os.symlink("../..", "up")
    write("bad\nname.txt", b"a newline in the name\n")
    write("back\\slash.txt", b"a backslash in the name\n")
    os.mkfifo("pipe")
    write(".hidden", b"left out\n")

tiny = int(arg("--tiny", "0"))
for i in range(tiny):
    write("tiny/%05d" % i, b"%d\n" % i)

big = int(arg("--big", "0"))
if big:
    with open("big.bin", "wb") as f:
        chunk = os.urandom(1 << 16)
        left = big
        while left > 0:
            f.write(chunk[:min(left, len(chunk))])
            left -= len(chunk)
    write("model.pt", os.urandom(1000))

print("outputs written", flush=True)
sleep = float(arg("--sleep-first", "0"))
if sleep and os.environ.get("RLS_ATTEMPT") == "1":
    time.sleep(sleep)
sys.exit(int(arg("--exit", "0")))
