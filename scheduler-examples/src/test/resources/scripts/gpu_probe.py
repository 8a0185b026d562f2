"""Test fixture: records when it ran and which GPUs it saw, then sleeps a little."""
import json
import os
import sys
import time

out = os.environ["RLS_RUN_DIR"]
start = time.time()
print("START cuda=%s" % os.environ.get("CUDA_VISIBLE_DEVICES", "<unset>"), flush=True)
time.sleep(float(sys.argv[sys.argv.index("--hold") + 1]) if "--hold" in sys.argv else 1.0)
end = time.time()
with open(os.path.join(out, "probe.json"), "w") as f:
    json.dump({"start": start, "end": end, "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
               "task": os.environ.get("RLS_TASK_ID")}, f)
print("END", flush=True)
