"""On SIGTERM prints a farewell on both streams (as a trainer saving a checkpoint would) and exits 0."""
import signal
import sys
import time


def on_term(signum, frame):
    print("saving checkpoint", flush=True)
    print("terminating", file=sys.stderr, flush=True)
    sys.exit(0)


signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while True:
    time.sleep(1)
