"""Starts grandchildren, prints their pids, then waits forever: a `sleep 300`, a python child, and a
`sleep 301` in a process group of its own (still in the launcher's session)."""
import os
import subprocess
import sys
import time

sleeper = subprocess.Popen(["sleep", "300"])
child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
own_group = subprocess.Popen(["sleep", "301"], process_group=0)
print("PIDS %d %d %d %d" % (os.getpid(), sleeper.pid, child.pid, own_group.pid), flush=True)
while True:
    time.sleep(1)
