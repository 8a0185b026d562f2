"""Test fixture: starts a grandchild process, reports both pids, then waits to be killed."""
import os
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(os.path.join(os.environ["RLS_RUN_DIR"], "pids"), "w") as f:
    f.write("%d %d\n" % (os.getpid(), child.pid))
print("PIDS %d %d" % (os.getpid(), child.pid), flush=True)
while True:
    time.sleep(0.2)
