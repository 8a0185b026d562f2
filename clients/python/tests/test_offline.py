"""rls_client against a scripted local HTTP server: no master needed.

Covers what a real master does not do on demand: a log stream that drops and repeats a line, the
error bodies, and the request bodies the client builds. Run: python3 clients/python/tests/test_offline.py
"""

import json
import os
import sys
import tempfile
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import rls_client  # noqa: E402
from rls_client import Client, RlsError  # noqa: E402


def _line(attempt, seq):
    return ("id: %d:%d\nevent: line\ndata: %s\n\n" % (
        attempt, seq, json.dumps({"attempt": attempt, "seq": seq, "stream": "STDOUT",
                                  "text": "line %d.%d" % (attempt, seq)}))).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    calls = []
    last_event_ids = []
    run_reads = {"w1": 0}

    def log_message(self, *args):
        pass

    def _json(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _sse_start(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _record(self, body=None):
        Handler.calls.append((self.command, self.path, self.headers.get("Authorization"), body))

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        self._record(body)
        if self.path == "/api/v1/runs":
            self._json(201, {"id": "r-1", "state": "QUEUED"})
        elif self.path == "/api/v1/sweeps":
            self._json(201, {"id": "sw-1", "runIds": ["sw-1-000"]})
        elif self.path == "/api/v1/runs/r-1/cancel":
            self._json(200, {"cancelled": True})
        else:
            self._json(404, {"error": {"code": "NOT_FOUND", "message": "no route"}})

    def do_GET(self):
        self._record()
        if self.headers.get("Authorization") == "Bearer rls_bad":
            self._json(401, {"error": {"code": "UNAUTHORIZED", "message": "unknown token"}})
            return
        path = self.path.split("?")[0]
        if path == "/api/v1/runs/r1/log/stream":
            last = self.headers.get("Last-Event-ID")
            Handler.last_event_ids.append(last)
            self._sse_start()
            if last is None:
                self.wfile.write(b": hi\n\n" + _line(1, 1) + _line(1, 2) + _line(1, 3))
            else:
                self.wfile.write(_line(1, 3) + _line(1, 4) + _line(2, 1)
                                 + b'event: end\ndata: {"state":"SUCCEEDED","complete":true,"note":null}\n\n')
            self.wfile.flush()
        elif path == "/api/v1/runs/w1":
            Handler.run_reads["w1"] += 1
            state = "RUNNING" if Handler.run_reads["w1"] <= 2 else "SUCCEEDED"
            self._json(200, {"id": "w1", "state": state})
        elif path == "/api/v1/runs/slow":
            self._json(200, {"id": "slow", "state": "QUEUED"})
        elif path == "/api/v1/events":
            self._sse_start()
            self.wfile.write(b'event: task\ndata: {"id":"other","to":"RUNNING"}\n\n')
            self.wfile.write(b'event: task\ndata: {"id":"w1","from":"RUNNING","to":"SUCCEEDED"}\n\n')
            self.wfile.flush()
            threading.Event().wait(0.5)
        elif path == "/api/v1/compare":
            self._json(200, {"runs": [
                {"id": "a", "state": "SUCCEEDED", "parameters": {"lr": 0.1}, "finalMetrics": {"reward": 1, "lr": 9}},
                {"id": "b", "state": "SUCCEEDED", "parameters": {"lr": 0.2}, "finalMetrics": {"reward": 2}}],
                "varying": ["lr"], "codeDiffering": False, "metric": "reward", "best": "b"})
        elif path == "/api/v1/runs/r1/log":
            after = None
            if "after=" in self.path:
                after = self.path.split("after=")[1].split("&")[0]
            if after is None:
                lines = [{"id": "1:%d" % i, "attempt": 1, "seq": i, "text": "l%d" % i} for i in range(1, 1001)]
                self._json(200, {"lines": lines, "next": "1:1000", "ended": False, "end": None})
            else:
                self._json(200, {"lines": [{"id": "1:1001", "attempt": 1, "seq": 1001, "text": "l1001"}],
                                 "next": "1:1001", "ended": True, "end": {"state": "SUCCEEDED"}})
        else:
            self._json(404, {"error": {"code": "NOT_FOUND", "message": "no run " + path}})


class OfflineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.server.daemon_threads = True
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d" % cls.server.server_address[1]

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()

    def client(self, token="rls_t"):
        return Client(self.url, token)

    def test_follow_reconnects_without_repeating_or_missing(self):
        Handler.last_event_ids[:] = []
        texts = [l["text"] for l in self.client().logs("r1", follow=True)]
        self.assertEqual(texts, ["line 1.1", "line 1.2", "line 1.3", "line 1.4", "line 2.1"])
        self.assertEqual(Handler.last_event_ids, [None, "1:3"])

    def test_logs_pages_through_everything(self):
        lines = list(self.client().logs("r1"))
        self.assertEqual(len(lines), 1001)
        self.assertEqual(lines[-1]["text"], "l1001")

    def test_wait_follows_events(self):
        Handler.run_reads["w1"] = 0
        self.assertEqual(self.client().wait("w1", timeout=20)["state"], "SUCCEEDED")

    def test_wait_timeout(self):
        with self.assertRaises(TimeoutError):
            self.client().wait("slow", timeout=0.5, poll=0.1)

    def test_errors(self):
        with self.assertRaises(RlsError) as e:
            self.client("rls_bad").runs()
        self.assertEqual((e.exception.status, e.exception.code, e.exception.message), (401, "UNAUTHORIZED", "unknown token"))
        with self.assertRaises(RlsError) as e:
            self.client().run("nope")
        self.assertEqual(e.exception.status, 404)
        with self.assertRaises(RlsError) as e:
            Client("http://127.0.0.1:1", "x").runs()
        self.assertEqual((e.exception.status, e.exception.code), (0, "UNREACHABLE"))

    def test_request_bodies(self):
        Handler.calls[:] = []
        c = self.client()
        c.submit("train.py", {"lr": 0.1}, gpus=1, task_id="my-1", timeoutSeconds=60, env={"A": "b"})
        c.sweep("train.py", grid={"lr": (0.1, 0.2)}, seeds=[1, 2], params={"episodes": 5}, gpus=1, name="scan")
        self.assertTrue(c.cancel("r-1"))
        posts = [(p, b) for (m, p, a, b) in Handler.calls if m == "POST"]
        self.assertEqual(posts[0], ("/api/v1/runs", {"script": "train.py", "parameters": {"lr": 0.1}, "gpus": 1,
                                                     "taskId": "my-1", "timeoutSeconds": 60, "env": {"A": "b"}}))
        self.assertEqual(posts[1], ("/api/v1/sweeps", {"name": "scan", "base": {
            "script": "train.py", "parameters": {"episodes": 5}, "gpus": 1},
            "grid": {"lr": [0.1, 0.2]}, "seeds": [1, 2]}))
        self.assertTrue(all(a == "Bearer rls_t" for (_, _, a, _) in Handler.calls))

    def test_compare_frame_without_pandas(self):
        rows = self.client().compare_frame(ids=["a", "b"], metric="reward")
        if isinstance(rows, list):
            self.assertEqual(rows[0], {"id": "a", "state": "SUCCEEDED", "lr": 0.1, "reward": 1, "metric.lr": 9,
                                       "best": False})
            self.assertTrue(rows[1]["best"])
        else:
            self.assertEqual(list(rows.index), ["a", "b"])

    def test_config_precedence(self):
        saved = {k: os.environ.pop(k, None) for k in ("RLS_SERVER", "RLS_TOKEN", "RLS_CONFIG")}
        try:
            with tempfile.NamedTemporaryFile("w", suffix=".properties", delete=False) as f:
                f.write("# lab\nserver = gpu-master:9000/\ntoken=rls_file\n")
            os.environ["RLS_CONFIG"] = f.name
            c = Client()
            self.assertEqual((c.server, c.token), ("http://gpu-master:9000", "rls_file"))
            os.environ["RLS_TOKEN"] = "rls_env"
            self.assertEqual(Client().token, "rls_env")
            self.assertEqual(Client(token="rls_arg").token, "rls_arg")
            os.environ["RLS_SERVER"] = "http://env:1"
            self.assertEqual(Client().server, "http://env:1")
            os.unlink(f.name)
            self.assertEqual(Client(token="x").server, "http://env:1")
            del os.environ["RLS_SERVER"]
            self.assertEqual(Client(token="x").server, rls_client.DEFAULT_SERVER)
        finally:
            for k, v in saved.items():
                os.environ.pop(k, None)
                if v is not None:
                    os.environ[k] = v


if __name__ == "__main__":
    unittest.main(verbosity=2)
