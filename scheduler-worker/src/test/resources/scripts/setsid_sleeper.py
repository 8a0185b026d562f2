"""Leads its own process group (like a launcher would) but is not one; prints its pid, sleeps."""
import os
import time

os.setsid()
print("PID %d" % os.getpid(), flush=True)
while True:
    time.sleep(1)
