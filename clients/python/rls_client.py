"""A client for the rl-scheduler HTTP API (docs/http.md), in one file, standard library only.

Copy this file next to your notebook or script (Python 3.8 or newer)::

    from rls_client import Client

    c = Client()                                   # RLS_SERVER / RLS_TOKEN / ~/.config/rls/config.properties
    run = c.submit("train.py", {"lr": 0.1, "episodes": 500}, gpus=1)
    for line in c.logs(run["id"], follow=True):    # live, to the end
        print(line["text"])
    final = c.wait(run["id"])
    print(final["state"], final["finalMetrics"])

    sweep = c.sweep("train.py", grid={"lr": [0.01, 0.05, 0.1]}, seeds=[1, 2], params={"episodes": 500})
    for r in sweep["runIds"]:
        c.wait(r)
    print(c.compare_frame(sweep=sweep["id"], metric="final_reward"))

Every error the server answers (``{"error": {"code", "message"}}``), and a server that cannot be
reached, raises :class:`RlsError`. docs/python.md describes every method.
"""

import hashlib
import json
import os
import socket
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "RlsError", "TERMINAL_STATES", "DEFAULT_SERVER"]
__version__ = "0.1.0"

DEFAULT_SERVER = "http://127.0.0.1:8080"

#: The states a run never leaves.
TERMINAL_STATES = frozenset(["SUCCEEDED", "FAILED", "CANCELLED", "TIMED_OUT"])

# A stream that sends nothing, not even its keep-alive comment (every 15 s), for this long is
# taken for dead and reopened.
_SILENCE_SECONDS = 45.0
_MAX_STREAM_FAILURES = 10
_PAGE = 1000


class RlsError(Exception):
    """An error from the server, or no server at all.

    Attributes:
        status: the HTTP status (401, 404, ...); 0 when the server could not be reached.
        code: the error's code (``UNAUTHORIZED``, ``NOT_FOUND``, ``INVALID_SPEC``, ...;
            ``UNREACHABLE`` when the server could not be reached).
        message: the server's message.
    """

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def __str__(self):
        return "%s (%s %s)" % (self.message, self.status, self.code)

    def __repr__(self):
        return "RlsError(%r, %r, %r)" % (self.status, self.code, self.message)


def _config_path():
    named = os.environ.get("RLS_CONFIG")
    if named:
        return named
    return os.path.join(os.path.expanduser("~"), ".config", "rls", "config.properties")


def _read_properties(path):
    """The ``key=value`` lines of a Java-style properties file (comments ``#`` and ``!``)."""
    props = {}
    try:
        with open(path, "r", encoding="utf-8") as f:
            for raw in f:
                line = raw.strip()
                if not line or line[0] in "#!":
                    continue
                cut = [i for i in (line.find("="), line.find(":")) if i >= 0]
                if not cut:
                    continue
                i = min(cut)
                props[line[:i].strip()] = line[i + 1:].strip()
    except OSError:
        pass
    return props


def _normalize(server):
    s = server.strip()
    if "://" not in s:
        s = "http://" + s
    return s.rstrip("/")


def _quote(segment):
    return urllib.parse.quote(str(segment), safe="")


def _id_key(event_id):
    """``"attempt:seq"`` as a sortable tuple, or None for another form."""
    try:
        attempt, seq = event_id.split(":", 1)
        return (int(attempt), int(seq))
    except (ValueError, AttributeError):
        return None


class Client:
    """A connection to one rl-scheduler server.

    Args:
        server: the base URL, e.g. ``http://gpu-master:8080``. Default: ``RLS_SERVER``, else the
            config file's ``server=``, else ``http://127.0.0.1:8080``.
        token: the API token (``rls_...``). Default: ``RLS_TOKEN``, else the config file's
            ``token=``. The config file is ``RLS_CONFIG`` or ``~/.config/rls/config.properties``,
            the same file as the ``rls`` command line's.
        timeout: seconds to wait for an answer to one request (streams excepted).
    """

    def __init__(self, server=None, token=None, timeout=60.0):
        props = None
        if server is None:
            server = os.environ.get("RLS_SERVER") or None
        if token is None:
            token = os.environ.get("RLS_TOKEN") or None
        if server is None or token is None:
            props = _read_properties(_config_path())
            server = server or props.get("server") or None
            token = token or props.get("token") or None
        self.server = _normalize(server or DEFAULT_SERVER)
        self.token = token
        self.timeout = timeout

    def __repr__(self):
        return "Client(%r)" % self.server

    # ------------------------------------------------------------------ plumbing

    def _url(self, path, query=None):
        url = self.server + path
        if query:
            q = {k: ("true" if v is True else "false" if v is False else v)
                 for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        return url

    def _headers(self, extra=None):
        h = {"Accept": "application/json", "User-Agent": "rls_client/" + __version__}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if extra:
            h.update(extra)
        return h

    def _error(self, status, body):
        code, message = "HTTP_%d" % status, None
        try:
            err = json.loads(body.decode("utf-8", "replace")).get("error")
            if isinstance(err, dict):
                code = err.get("code") or code
                message = err.get("message")
        except (ValueError, AttributeError):
            pass
        if not message:
            message = "HTTP %d from %s" % (status, self.server)
        if status == 401 and not self.token:
            message += " (no token: pass token=, set RLS_TOKEN, or put token= in the config file)"
        return RlsError(status, code, message)

    def _unreachable(self, exc):
        reason = getattr(exc, "reason", None) or exc
        return RlsError(0, "UNREACHABLE", "cannot reach the server at %s: %s" % (self.server, reason))

    def _open(self, method, path, query=None, body=None, headers=None, timeout=None):
        data = None
        extra = dict(headers or {})
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            extra["Content-Type"] = "application/json"
        req = urllib.request.Request(self._url(path, query), data=data, method=method,
                                     headers=self._headers(extra))
        try:
            return urllib.request.urlopen(req, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as e:
            try:
                raw = e.read()
            finally:
                e.close()
            raise self._error(e.code, raw) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError, OSError) as e:
            raise self._unreachable(e) from None

    def _call(self, method, path, query=None, body=None):
        with self._open(method, path, query=query, body=body) as resp:
            raw = resp.read()
        if not raw.strip():
            return {}
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            raise RlsError(resp.status, "BAD_ANSWER", "the server's answer is not JSON") from None

    def _get(self, path, **query):
        return self._call("GET", path, query=query)

    def _post(self, path, body=None):
        return self._call("POST", path, body={} if body is None else body)

    def _sse_open(self, path, last_event_id=None, read_timeout=_SILENCE_SECONDS):
        """Opens a Server-Sent Events stream (answers ``RlsError`` when refused or unreachable)."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        return self._open("GET", path, headers=headers, timeout=read_timeout)

    @staticmethod
    def _sse_read(resp):
        """Yields ``(event, id, data)`` from an open stream until it closes; a keep-alive comment
        yields ``("", None, None)``. A read that waits past the socket's timeout raises
        ``socket.timeout``."""
        event, ev_id, data = None, None, None
        while True:
            raw = resp.readline()
            if not raw:
                return
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line == "":
                if data is not None:
                    yield (event or "message", ev_id, "\n".join(data))
                event, ev_id, data = None, None, None
                continue
            if line.startswith(":"):
                yield ("", None, None)
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "event":
                event = value
            elif field == "data":
                data = [value] if data is None else data + [value]
            elif field == "id":
                ev_id = value or None

    def _events(self, path, last_event_id=None, read_timeout=_SILENCE_SECONDS):
        """Yields ``(event, id, data)`` from one connection until it closes."""
        resp = self._sse_open(path, last_event_id, read_timeout)
        try:
            for item in self._sse_read(resp):
                yield item
        finally:
            resp.close()

    def _follow(self, path, item_event, end_holder=None):
        """Yields each item of a log or metrics stream once, in order, to its ``end`` event.

        A dropped or silent connection is reopened with ``Last-Event-ID`` set to the last item's
        id, so the server neither repeats nor skips an item; an item whose id is not after the
        last one is dropped all the same.
        """
        last_id = None
        failures = 0
        last_error = None
        while True:
            if failures:
                if failures > _MAX_STREAM_FAILURES:
                    raise last_error or RlsError(0, "STREAM_CLOSED",
                                                 "the stream %s kept closing before its end" % path)
                time.sleep(min(5.0, 0.25 * 2 ** (failures - 1)))
            try:
                for event, ev_id, data in self._events(path, last_id):
                    if event == "":
                        continue
                    failures, last_error = 0, None
                    if event == "end":
                        if end_holder is not None:
                            end_holder.append(json.loads(data) if data else {})
                        return
                    if event != item_event:
                        continue
                    if ev_id is not None:
                        if last_id is not None:
                            k, lk = _id_key(ev_id), _id_key(last_id)
                            if (k is not None and lk is not None and k <= lk) or ev_id == last_id:
                                continue
                        last_id = ev_id
                    item = json.loads(data)
                    if isinstance(item, dict) and ev_id is not None:
                        item.setdefault("id", ev_id)
                    yield item
            except RlsError as e:
                if e.status != 0:
                    raise
                last_error = e
            except (socket.timeout, ConnectionError, OSError, ValueError) as e:
                last_error = self._unreachable(e)
            failures += 1

    # ------------------------------------------------------------------ runs

    def submit(self, script, params=None, gpus=0, **spec):
        """Submits one run and returns it (a dict, as ``run()`` gives).

        Args:
            script: the training script, relative to the workers' script root.
            params: the run's parameters, a dict of JSON values.
            gpus: GPUs for the run.
            **spec: any other field of the spec, by its API name: ``args`` (list), ``env`` (dict),
                ``cpuSlots``, ``memoryBytes``, ``priority``, ``timeoutSeconds``, ``maxAttempts``,
                ``selector`` (dict), ``taskId``, ``owner``. The snake_case forms (``task_id``,
                ``timeout_seconds``, ``max_attempts``, ...) are accepted too.
        """
        body = {"script": script}
        if params:
            body["parameters"] = dict(params)
        if gpus:
            body["gpus"] = gpus
        body.update(_camel(spec))
        return self._call("POST", "/api/v1/runs", body=body)

    def sweep(self, script, grid=None, seeds=None, params=None, **base):
        """Submits a sweep: the product of ``grid`` (parameters in the order given) times ``seeds``.

        Args:
            script: the training script.
            grid: ``{"lr": [0.01, 0.1], "gamma": [0.9, 0.99]}``.
            seeds: ``[1, 2, 3]``; each grid point runs once per seed.
            params: parameters shared by every run.
            **base: other fields of the runs' spec (``gpus``, ``priority``, ...), and the sweep's
                own ``name`` and ``seedParameter`` (default ``seed``).

        Returns:
            the sweep: ``{"id", "name", "runIds": [...], "runs": [...], ...}``.
        """
        base = _camel(base)
        body = {}
        for key in ("name", "seedParameter"):
            if key in base:
                body[key] = base.pop(key)
        spec = {"script": script}
        if params:
            spec["parameters"] = dict(params)
        spec.update(base)
        body["base"] = spec
        if grid:
            body["grid"] = {k: list(v) for k, v in grid.items()}
        if seeds is not None:
            body["seeds"] = list(seeds)
        return self._call("POST", "/api/v1/sweeps", body=body)

    def run(self, id):
        """One run: state, parameters, attempt, worker, exit code, final metrics, history."""
        return self._get("/api/v1/runs/" + _quote(id))

    def runs(self, state=None, mine=False, sweep=None, limit=50, owner=None, offset=0, script=None):
        """Runs, newest first, as a list of run dicts (one page: ``limit`` from ``offset``)."""
        answer = self._get("/api/v1/runs", state=state, mine=True if mine else None, sweep=sweep,
                           owner=owner, script=script, offset=offset or None, limit=limit)
        return answer.get("runs", [])

    def sweep_info(self, id):
        """One sweep: its base spec, grid, seeds, run ids and runs."""
        return self._get("/api/v1/sweeps/" + _quote(id))

    def cancel(self, id):
        """Cancels a run; True if it was cancelled, False if it had already ended otherwise."""
        return bool(self._post("/api/v1/runs/%s/cancel" % _quote(id)).get("cancelled"))

    def why(self, id):
        """Why a run still waits: ``{"code", "message", "position", "reasons"}``."""
        return self._get("/api/v1/runs/%s/why" % _quote(id))

    def attempts(self, id):
        """Each attempt's provenance: worker, host, script SHA-256, git commit, python, GPUs."""
        return self._get("/api/v1/runs/%s/attempts" % _quote(id)).get("attempts", [])

    def wait(self, id, timeout=None, poll=2.0):
        """Waits until the run ends and returns its final run dict.

        Follows the server's task events (``/api/v1/events``) and re-reads the run when one of
        them concerns it (and at least every 15 s); a server without the event stream is polled
        every ``poll`` seconds instead.

        Args:
            id: the run.
            timeout: seconds to wait at most; None waits as long as it takes.
            poll: seconds between re-reads when there is no event stream (or while it reconnects).

        Raises:
            TimeoutError: the timeout passed first (the run goes on).
            RlsError: the server refused (e.g. no such run) or could not be reached for long.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        path = "/api/v1/runs/" + _quote(id)
        run = self._get(path)
        use_events = True
        failures = 0

        def remaining():
            return None if deadline is None else deadline - time.monotonic()

        while run.get("state") not in TERMINAL_STATES:
            left = remaining()
            if left is not None and left <= 0:
                raise TimeoutError("run %s is still %s after %ss" % (id, run.get("state"), timeout))
            if not use_events:
                time.sleep(poll if left is None else max(0.0, min(poll, left)))
                run = self._get(path)
                continue
            try:
                resp = self._sse_open("/api/v1/events", read_timeout=_read_window(left))
            except RlsError as e:
                if e.status in (404, 405):
                    use_events = False
                    continue
                if e.status not in (0, 503):
                    raise
                failures += 1
                if failures > _MAX_STREAM_FAILURES:
                    raise
                time.sleep(poll if left is None else max(0.0, min(poll, left)))
                run = self._get(path)
                continue
            try:
                # Read the run once the stream is open, so that a change just before is not missed.
                run = self._get(path)
                refreshed = time.monotonic()
                if run.get("state") in TERMINAL_STATES:
                    break
                for event, _, data in self._sse_read(resp):
                    failures = 0
                    if event in ("task", "message") and data:
                        try:
                            concerns = json.loads(data).get("id") == id
                        except (ValueError, AttributeError):
                            concerns = False
                        if concerns or time.monotonic() - refreshed > 15.0:
                            run = self._get(path)
                            refreshed = time.monotonic()
                            if run.get("state") in TERMINAL_STATES:
                                break
                    left = remaining()
                    if left is not None and left <= 0:
                        break
                    _set_read_timeout(resp, _read_window(left))
                else:
                    failures += 1  # the server closed the stream: reopen it
            except socket.timeout:
                pass  # silence, or the deadline: look again above
            except (ConnectionError, OSError, ValueError):
                failures += 1
            finally:
                resp.close()
            if run.get("state") in TERMINAL_STATES:
                break
            if failures > _MAX_STREAM_FAILURES:
                raise RlsError(0, "UNREACHABLE", "lost the event stream of %s while waiting" % self.server)
            if failures:
                left = remaining()
                time.sleep(min(poll, 0.25 * 2 ** min(failures, 5)) if left is None else max(0.0, min(poll, left)))
            run = self._get(path)
        return run

    # ------------------------------------------------------------------ logs, metrics

    def logs(self, id, follow=False):
        """Iterates over a run's log lines, each ``{"id": "1:57", "attempt", "seq", "text", ...}``.

        With ``follow=False``, the lines written so far. With ``follow=True``, every line so far and
        then new ones live (Server-Sent Events) until the run ends; a dropped connection is
        reopened with ``Last-Event-ID``, so no line is repeated and none missed.
        """
        if follow:
            return self._follow("/api/v1/runs/%s/log/stream" % _quote(id), "line")
        return self._log_pages(id)

    def _log_pages(self, id):
        after = None
        while True:
            page = self._get("/api/v1/runs/%s/log" % _quote(id), after=after, limit=_PAGE)
            lines = page.get("lines") or []
            for line in lines:
                yield line
            nxt = page.get("next")
            if len(lines) < _PAGE or not nxt or nxt == after:
                return
            after = nxt

    def log_text(self, id):
        """The run's whole log so far, as one string."""
        return "".join(line.get("text", "") + "\n" for line in self.logs(id))

    def metrics(self, id, follow=False):
        """Iterates over a run's metric points (its ``RLS_METRIC {...}`` lines):
        ``{"attempt", "seq", "values": {"step": 3, "reward": 0.5}}``.

        With ``follow=True`` the points come live until the run ends (reconnecting like ``logs``).
        """
        if follow:
            return self._follow("/api/v1/runs/%s/metrics/stream" % _quote(id), "metric")
        return iter(self._get("/api/v1/runs/%s/metrics" % _quote(id)).get("points", []))

    # ------------------------------------------------------------------ compare, artifacts

    def compare(self, ids=None, sweep=None, metric=None, higher=True):
        """Compares runs (``ids``) or a sweep's runs: ``{"runs": [...], "varying": [...],
        "codeDiffering": bool, "metric", "best"}``; ``best`` is the id with the highest (or, with
        ``higher=False``, the lowest) final ``metric``."""
        if (ids is None) == (sweep is None):
            raise ValueError("compare wants either ids or sweep")
        query = {"metric": metric, "higher": (bool(higher) if metric else None)}
        if sweep is not None:
            return self._get("/api/v1/sweeps/%s/compare" % _quote(sweep), **query)
        if isinstance(ids, str):
            ids = [ids]
        return self._get("/api/v1/compare", ids=",".join(ids), **query)

    def compare_frame(self, ids=None, sweep=None, metric=None, higher=True):
        """``compare`` as a table: one row per run with ``id``, ``state``, each parameter, each final
        metric (prefixed ``metric.`` when a parameter has the same name) and ``best``. A pandas
        DataFrame indexed by ``id`` when pandas is importable, else a list of plain dicts."""
        answer = self.compare(ids=ids, sweep=sweep, metric=metric, higher=higher)
        rows = []
        for r in answer.get("runs", []):
            row = {"id": r.get("id"), "state": r.get("state")}
            params = r.get("parameters") or {}
            row.update(params)
            for k, v in (r.get("finalMetrics") or {}).items():
                row[("metric." + k) if k in row else k] = v
            row["best"] = r.get("id") == answer.get("best")
            rows.append(row)
        try:
            import pandas  # noqa: F401 (optional)
        except ImportError:
            return rows
        frame = pandas.DataFrame(rows)
        if "id" in frame.columns:
            frame = frame.set_index("id")
        return frame

    def artifacts(self, id):
        """The run's artifacts: ``[{"kind", "attempt", "checkpointId", "path", "key", "size", "sha256"}]``."""
        return self._get("/api/v1/runs/%s/artifacts" % _quote(id)).get("artifacts", [])

    def download_artifacts(self, id, directory):
        """Downloads every artifact of the run into ``directory`` (made if missing), each as
        ``attempt-<n>/[<checkpointId>/]<path>``, checking its SHA-256 when the server gives one.
        Returns the paths written."""
        written = []
        root = os.path.abspath(directory)
        for art in self.artifacts(id):
            rel = str(art.get("path") or art.get("key") or "artifact")
            parts = ["attempt-%s" % art.get("attempt", 0)]
            if art.get("checkpointId"):
                parts.append(str(art["checkpointId"]))
            parts.extend(p for p in rel.replace("\\", "/").split("/") if p not in ("", ".", ".."))
            target = os.path.join(root, *parts)
            if not os.path.abspath(target).startswith(root + os.sep):
                raise RlsError(0, "BAD_ARTIFACT", "artifact path escapes the directory: %r" % rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            digest = hashlib.sha256()
            tmp = target + ".part"
            with self._open("GET", "/api/v1/runs/%s/artifacts/file" % _quote(id),
                            query={"key": art.get("key")}, headers={"Accept": "application/octet-stream"}) as resp, \
                    open(tmp, "wb") as out:
                while True:
                    chunk = resp.read(1 << 16)
                    if not chunk:
                        break
                    digest.update(chunk)
                    out.write(chunk)
            want = art.get("sha256")
            if want and digest.hexdigest() != want.lower():
                os.remove(tmp)
                raise RlsError(0, "BAD_ARTIFACT", "artifact %s: SHA-256 mismatch" % rel)
            os.replace(tmp, target)
            written.append(target)
        return written

    # ------------------------------------------------------------------ the lab

    def workers(self):
        """The workers: ``[{"id", "state", "labels", "cpuSlots", "freeCpuSlots", "gpus": [...], "runs": [...]}]``."""
        return self._get("/api/v1/workers").get("workers", [])

    def queue(self, limit=None):
        """The waiting runs, first first, each with its ``why``: ``{"total", "runs"}``."""
        return self._get("/api/v1/queue", limit=limit)

    def me(self):
        """Whose token this is: ``{"user", "admin"}``."""
        return self._get("/api/v1/me")


def _read_window(left):
    """A stream's read timeout: the silence limit, or less when a deadline is nearer."""
    return _SILENCE_SECONDS if left is None else max(0.05, min(_SILENCE_SECONDS, left))


def _set_read_timeout(resp, seconds):
    """Shortens an open response's socket timeout as a deadline nears (best effort)."""
    try:
        resp.fp.raw._sock.settimeout(seconds)
    except AttributeError:
        pass


_SNAKE = {
    "task_id": "taskId", "id": "taskId", "timeout_seconds": "timeoutSeconds", "max_attempts": "maxAttempts",
    "cpu_slots": "cpuSlots", "memory_bytes": "memoryBytes", "seed_parameter": "seedParameter",
    "parameters": "parameters",
}


def _camel(spec):
    return {_SNAKE.get(k, k): v for k, v in spec.items()}
