"""Starts a child that leaves the session (setsid) but keeps stdout, prints its pid, and exits."""
import subprocess
import sys

escapee = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"],
                           start_new_session=True)
print("ESCAPEE %d" % escapee.pid, flush=True)
