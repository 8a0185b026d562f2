"""Prints, as one JSON line, what the scheduler gave it: argv, environment, cwd, params.json, stdin."""
import json
import os
import sys

keys = ["CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "PYTHONUNBUFFERED", "RLS_TASK_ID", "RLS_ATTEMPT",
        "RLS_EPOCH", "RLS_TRACE_ID", "RLS_RUN_DIR", "RLS_CHECKPOINT_DIR", "RLS_PARAMS_FILE", "MY_VAR"]
with open(os.environ["RLS_PARAMS_FILE"], encoding="utf-8") as f:
    params = json.load(f)
report = {
    "argv": sys.argv[1:],
    "env": {k: os.environ[k] for k in keys if k in os.environ},
    "cwd": os.getcwd(),
    "params": params,
    "stdin": os.read(0, 100).decode("utf-8", "replace"),
    "pgid_is_parent": os.getpgid(0) == os.getppid(),
}
print("REPORT " + json.dumps(report))
