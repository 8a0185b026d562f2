"""Test fixture: a poison task. It kills the worker JVM that runs it (the launcher's parent)
with SIGKILL, the way a task that crashes its machine would, then waits to be killed."""
import os
import signal
import time

launcher = os.getppid()
with open("/proc/%d/stat" % launcher) as f:
    stat = f.read()
jvm = int(stat[stat.rfind(")") + 2:].split()[1])
print("poison: killing worker JVM %d" % jvm, flush=True)
os.kill(jvm, signal.SIGKILL)
while True:
    time.sleep(1)
