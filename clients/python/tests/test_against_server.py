"""rls_client against a real master (run by scheduler-cli's PythonClientIT).

Environment: RLS_SERVER, RLS_TOKEN (a user's token), RLS_TEST_SCRIPT (a script the workers have:
it reads its parameters from RLS_PARAMS_FILE, waits for the file named by the parameter ``gate``
when given, prints ``line i`` and ``RLS_METRIC {"step": i, "reward": lr * i}`` for i in 1..lines,
and exits with the parameter ``exit``), RLS_TEST_GATE_DIR (where this test may create gate files).
Prints one ``ok <check>`` line per check and ``ALL OK`` at the end; exits non-zero on a failure.
"""

import os
import sys
import threading
import time
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from rls_client import Client, RlsError  # noqa: E402

SCRIPT = os.environ["RLS_TEST_SCRIPT"]
GATES = os.environ["RLS_TEST_GATE_DIR"]
WAIT = 120


def check(name, condition, detail=""):
    if not condition:
        print("FAILED %s %s" % (name, detail), flush=True)
        sys.exit(1)
    print("ok " + name, flush=True)


def gate(name):
    path = os.path.join(GATES, name)
    return path, lambda: open(path, "w").close()


def main():
    c = Client()
    me = c.me()
    check("me", me.get("user"), me)

    # one run, followed live: its gate opens only once the follower is reading
    path, open_gate = gate("py-follow")
    run = c.submit(SCRIPT, {"lines": 5, "lr": 0.5, "gate": path}, gpus=1)
    check("submit", run.get("id") and run.get("state") in ("QUEUED", "ASSIGNED", "RUNNING"), run)
    follow = c.logs(run["id"], follow=True)
    threading.Timer(0.0, open_gate).start()
    texts = [l["text"] for l in follow if l.get("text", "").startswith("line ")]
    check("logs follow", texts == ["line %d" % i for i in range(1, 6)], texts)
    final = c.wait(run["id"], timeout=WAIT)
    check("wait succeeded", final["state"] == "SUCCEEDED", final)
    check("final metrics", final.get("finalMetrics", {}).get("reward") == 2.5, final.get("finalMetrics"))
    points = list(c.metrics(run["id"]))
    check("metrics", [p["values"]["step"] for p in points] == [1, 2, 3, 4, 5], points)
    check("metrics values", points[-1]["values"]["reward"] == 2.5, points[-1])
    followed = list(c.metrics(run["id"], follow=True))
    check("metrics follow", len(followed) == 5, followed)
    check("logs", [l["text"] for l in c.logs(run["id"]) if l["text"].startswith("line ")] == texts)
    check("run", c.run(run["id"])["id"] == run["id"])

    # its artifacts (the ended log is copied to the store in the background): downloaded and checked
    deadline = time.time() + WAIT
    while not c.artifacts(run["id"]) and time.time() < deadline:
        time.sleep(0.1)
    with tempfile.TemporaryDirectory() as into:
        written = c.download_artifacts(run["id"], into)
        check("download artifacts", len(written) >= 1 and all(os.path.isfile(f) for f in written), written)
        texts_on_disk = "".join(open(f, encoding="utf-8", errors="replace").read() for f in written)
        check("downloaded log", "line 3" in texts_on_disk, written)

    # a failing run
    bad = c.submit(SCRIPT, {"lines": 1, "exit": 3}, maxAttempts=1)
    final = c.wait(bad["id"], timeout=WAIT)
    check("wait failed", final["state"] == "FAILED" and final.get("exitCode") == 3, final)

    # a sweep, compared
    sweep = c.sweep(SCRIPT, grid={"lr": [0.1, 0.2, 0.3]}, seeds=[1, 2], params={"lines": 2}, name="py scan")
    ids = sweep["runIds"]
    check("sweep", len(ids) == 6 and all(i.startswith(sweep["id"] + "-") for i in ids), sweep)
    for i in ids:
        check("sweep run " + i, c.wait(i, timeout=WAIT)["state"] == "SUCCEEDED")
    listed = c.runs(sweep=sweep["id"])
    check("runs by sweep", sorted(r["id"] for r in listed) == sorted(ids), [r["id"] for r in listed])
    cmp = c.compare(sweep=sweep["id"], metric="reward")
    check("compare best", c.run(cmp["best"])["parameters"]["lr"] == 0.3, cmp)
    check("compare varying", set(cmp["varying"]) >= {"lr", "seed"}, cmp["varying"])
    low = c.compare(ids=ids, metric="reward", higher=False)
    check("compare lower", c.run(low["best"])["parameters"]["lr"] == 0.1, low)
    frame = c.compare_frame(sweep=sweep["id"], metric="reward")
    check("compare frame", len(frame) == 6, frame)

    # cancel a run that waits for a gate that never opens
    path, _ = gate("py-never")
    held = c.submit(SCRIPT, {"lines": 1, "gate": path})
    check("cancel", c.cancel(held["id"]) is True)
    check("wait cancelled", c.wait(held["id"], timeout=WAIT)["state"] == "CANCELLED")
    check("cancel an ended run", c.cancel(run["id"]) is False)

    check("workers", len(c.workers()) >= 1)

    # errors
    try:
        Client(c.server, "rls_not_a_token").runs()
        check("bad token", False, "no error")
    except RlsError as e:
        check("bad token", e.status == 401 and e.code == "UNAUTHORIZED" and e.message, repr(e))
    try:
        c.run("no-such-run")
        check("not found", False, "no error")
    except RlsError as e:
        check("not found", e.status == 404 and e.code == "NOT_FOUND", repr(e))
    try:
        c.submit(SCRIPT, gpus=-1)
        check("invalid spec", False, "no error")
    except RlsError as e:
        check("invalid spec", e.status == 400, repr(e))

    print("ALL OK", flush=True)


if __name__ == "__main__":
    main()
