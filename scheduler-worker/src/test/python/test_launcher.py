"""Tests of launcher.py, the worker's process supervisor, against real processes.

Run: python3 -m unittest discover -s scheduler-worker/src/test/python -p 'test_*.py'

Each test starts the launcher as the worker does (stdin a pipe the test holds), with a
small shell task that records its pid and its background grandchild's pid in files.
Death is checked by polling /proc with a deadline: a zombie counts as dead (a killed
orphan may stay a zombie for a while under a container's init), a blind sleep never
stands in for a condition. Linux only, like the launcher's full behaviour.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCHER = os.path.normpath(os.path.join(
    HERE, "..", "..", "main", "resources", "io", "rlscheduler", "worker", "launcher.py"))

# Generous against a loaded 2-core machine, still far below the tasks' 60 s sleeps, so
# that "dead before the deadline" can only mean "killed".
DEADLINE_S = 5.0

# $1: grandchild pid file, $2: child pid file. Written via mv so that a reader never sees
# an empty file. The grandchild is a plain `sleep 60` in the background, as a careless
# training script's helper would be.
TASK_WITH_GRANDCHILD = (
    'sleep 60 & echo $! > "$1.tmp" && mv "$1.tmp" "$1"; '
    'echo $$ > "$2.tmp" && mv "$2.tmp" "$2"; wait')


def proc_stat(pid):
    """(state, pgrp) of pid, or None if it does not exist."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    return fields[0].decode(), int(fields[2])


def alive(pid):
    stat = proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def wait_for(condition, timeout=DEADLINE_S, interval=0.02):
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


@unittest.skipUnless(sys.platform.startswith("linux"), "the launcher's group tracking needs /proc")
class LauncherTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rls-launcher-test-")
        self.dir = self.tmp.name
        self.launchers = []
        self.task_pids = []

    def tearDown(self):
        # Whatever a failed test left behind, end it: only processes of a launcher's
        # group (checked in /proc, so a reused pid is never hit), and a launcher's group
        # only while that launcher still lives (then its pgid cannot have been reused).
        for pid in self.task_pids:
            stat = proc_stat(pid)
            if stat is not None and any(stat[1] == p.pid for p in self.launchers):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for p in self.launchers:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait(timeout=DEADLINE_S)
            for stream in (p.stdin, p.stdout, p.stderr):
                if stream:
                    stream.close()
        self.tmp.cleanup()

    # ---- helpers -------------------------------------------------------------------

    def path(self, name):
        return os.path.join(self.dir, name)

    def start(self, cmd, *options, stdout=subprocess.DEVNULL):
        p = subprocess.Popen(
            [sys.executable, "-u", LAUNCHER] + list(options) + ["--"] + list(cmd),
            stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE)
        self.launchers.append(p)
        return p

    def start_task_with_grandchild(self, *options, stdout=subprocess.DEVNULL):
        p = self.start(["sh", "-c", TASK_WITH_GRANDCHILD, "sh",
                        self.path("grandchild.pid"), self.path("child.pid")],
                       *options, stdout=stdout)
        grandchild = self.read_pid("grandchild.pid")
        child = self.read_pid("child.pid")
        return p, child, grandchild

    def read_pid(self, name):
        path = self.path(name)
        self.assertTrue(wait_for(lambda: os.path.exists(path)), "task never wrote " + name)
        with open(path) as f:
            pid = int(f.read())
        self.task_pids.append(pid)
        return pid

    def assert_dead(self, *pids):
        self.assertTrue(wait_for(lambda: not any(alive(pid) for pid in pids)),
                        "still alive after %ss: %s"
                        % (DEADLINE_S, [pid for pid in pids if alive(pid)]))

    def finish(self, p):
        """Wait for the launcher; return (exit status, stderr text)."""
        try:
            p.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.fail("launcher still running after %ss" % DEADLINE_S)
        return p.returncode, p.stderr.read().decode()

    # ---- exit status -------------------------------------------------------------------

    def test_exit_code_zero_and_stdout_belongs_to_the_task(self):
        p = self.start(["sh", "-c", "echo hello; echo oops >&2"], stdout=subprocess.PIPE)
        # Not p.communicate(): it closes the launcher's stdin first, which means "the worker is
        # gone", and a launcher that saw that before its task exited stopped it (143, a flake
        # on a loaded machine). The worker holds stdin open; so does the test, until the end.
        stdin, p.stdin = p.stdin, None
        try:
            out, err = p.communicate(timeout=DEADLINE_S)
        finally:
            stdin.close()
        self.assertEqual(p.returncode, 0)
        self.assertEqual(out, b"hello\n")  # the launcher adds nothing to stdout
        self.assertIn(b"oops", err)

    def test_exit_code_passthrough(self):
        p = self.start(["sh", "-c", "exit 3"])
        self.assertEqual(self.finish(p)[0], 3)

    def test_child_killed_by_signal_gives_128_plus_signal(self):
        p = self.start(["sh", "-c", "kill -USR1 $$"])
        self.assertEqual(self.finish(p)[0], 128 + signal.SIGUSR1)

    def test_launcher_failures_use_their_own_codes(self):
        self.assertEqual(self.finish(self.start([self.path("no-such-command")]))[0], 127)
        with open(self.path("not-executable"), "w") as f:
            f.write("#!/bin/sh\n")
        self.assertEqual(self.finish(self.start([self.path("not-executable")]))[0], 126)
        p = subprocess.run([sys.executable, LAUNCHER, "--grace", "soon", "--", "true"],
                           stdin=subprocess.PIPE, capture_output=True, timeout=DEADLINE_S)
        self.assertEqual(p.returncode, 125)
        self.assertEqual(p.stdout, b"")
        self.assertIn(b"rls-launcher: --grace", p.stderr)
        p = subprocess.run([sys.executable, LAUNCHER, "true"],
                           stdin=subprocess.PIPE, capture_output=True, timeout=DEADLINE_S)
        self.assertEqual(p.returncode, 125)
        self.assertIn(b"the command goes after --", p.stderr)

    # ---- the group -----------------------------------------------------------------------

    def test_task_runs_in_the_launchers_new_group(self):
        p, child, grandchild = self.start_task_with_grandchild()
        self.assertEqual(proc_stat(p.pid)[1], p.pid, "launcher leads its own group")
        self.assertEqual(proc_stat(child)[1], p.pid)
        self.assertEqual(proc_stat(grandchild)[1], p.pid)
        p.stdin.close()
        self.finish(p)

    def test_sigterm_to_launcher_kills_child_and_grandchild(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                for name in ("child.pid", "grandchild.pid"):
                    if os.path.exists(self.path(name)):
                        os.unlink(self.path(name))
                p, child, grandchild = self.start_task_with_grandchild("--grace", "3",
                                                                       stdout=subprocess.PIPE)
                p.send_signal(sig)
                self.assert_dead(child, grandchild)
                code, err = self.finish(p)
                # sh dies of the group's SIGTERM; the launcher reports it shell-style.
                self.assertEqual(code, 128 + signal.SIGTERM, err)
                self.assertIn("rls-launcher: received " + sig.name, err)
                self.assertEqual(p.stdout.read(), b"")

    def test_stdin_eof_kills_child_and_grandchild(self):
        # The worker JVM holds the only write end of the launcher's stdin: closing it is
        # exactly what the kernel does when the JVM dies, kill -9 included.
        p, child, grandchild = self.start_task_with_grandchild("--grace", "3")
        p.stdin.close()
        self.assert_dead(child, grandchild)
        code, err = self.finish(p)
        self.assertEqual(code, 128 + signal.SIGTERM, err)
        self.assertIn("stdin closed", err)

    def test_keepalives_keep_the_task_running_and_their_absence_kills_it(self):
        # The worker writes a byte per lease renewal. While bytes come, the task runs past
        # the keepalive timeout; when they stop (the JVM frozen by SIGSTOP, say) the
        # launcher kills the group itself within the timeout plus the grace period.
        p, child, grandchild = self.start_task_with_grandchild("--grace", "1", "--keepalive-timeout", "1")
        kept_until = time.monotonic() + 2.5
        while time.monotonic() < kept_until:
            p.stdin.write(b"\n")
            p.stdin.flush()
            self.assertTrue(alive(child) and alive(grandchild), "killed although keepalives arrived")
            time.sleep(0.2)  # the worker's heartbeat pacing, not a synchronisation
        silent_since = time.monotonic()
        self.assert_dead(child, grandchild)
        self.assertLess(time.monotonic() - silent_since, 1 + 1 + DEADLINE_S)
        code, err = self.finish(p)
        self.assertEqual(code, 128 + signal.SIGTERM, err)
        self.assertIn("no keepalive", err)

    def test_a_full_stderr_pipe_does_not_hold_up_the_kill(self):
        # The JVM is frozen (nobody reads the launcher's stderr, a pipe the task shares) and the
        # task filled that pipe: the launcher's own diagnostics must not block its kill.
        task = ('sleep 60 & echo $! > "$1.tmp" && mv "$1.tmp" "$1"; '
                'echo $$ > "$2.tmp" && mv "$2.tmp" "$2"; '
                'head -c 300000 /dev/zero | tr "\\000" x >&2; wait')
        p = self.start(["sh", "-c", task, "sh", self.path("grandchild.pid"), self.path("child.pid")],
                       "--grace", "1", "--keepalive-timeout", "1")
        grandchild = self.read_pid("grandchild.pid")
        child = self.read_pid("child.pid")
        silent_since = time.monotonic()
        self.assert_dead(child, grandchild)
        self.assertLess(time.monotonic() - silent_since, 1 + 1 + DEADLINE_S)
        # The "JVM" thaws and reads: the launcher's message comes after the task's output.
        _, err = p.communicate(timeout=DEADLINE_S)
        self.assertEqual(p.returncode, 128 + signal.SIGTERM)
        # On a line of its own although the task's output before it does not end its line:
        # the worker recognises the fence line only at the start of one.
        self.assertIn(b"\nrls-launcher: no keepalive", err)

    def test_keepalive_timeout_is_validated(self):
        p = self.start(["true"], "--keepalive-timeout", "-1")
        code, err = self.finish(p)
        self.assertEqual(code, 125, err)
        self.assertIn("--keepalive-timeout", err)

    def test_child_exiting_on_its_own_takes_its_leftovers_along(self):
        p = self.start(["sh", "-c", 'sleep 60 & echo $! > "$1.tmp" && mv "$1.tmp" "$1"; exit 5',
                        "sh", self.path("grandchild.pid")])
        grandchild = self.read_pid("grandchild.pid")
        code, err = self.finish(p)
        self.assertEqual(code, 5, err)
        self.assert_dead(grandchild)

    def test_member_that_left_the_group_but_not_the_session_is_killed(self):
        # A task may start a helper in a process group of its own (a shell with job
        # control does): killpg misses it, the launcher's session sweep must not.
        helper = ("import os, sys, time; os.setpgid(0, 0); "
                  "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid())); "
                  "os.rename(sys.argv[1] + '.tmp', sys.argv[1]); time.sleep(60)")
        p = self.start(["sh", "-c", '"$1" -c "$2" "$3" & wait', "sh",
                        sys.executable, helper, self.path("helper.pid")], "--grace", "3")
        helper_pid = self.read_pid("helper.pid")
        self.assertNotEqual(proc_stat(helper_pid)[1], p.pid)
        p.send_signal(signal.SIGTERM)
        self.assert_dead(helper_pid)
        self.finish(p)

    def test_child_ignoring_sigterm_is_killed_after_the_grace_period(self):
        # trap '' TERM: sh and the sleeps it starts (which inherit the ignore) all shrug
        # off SIGTERM; only the SIGKILL after --grace ends them.
        p = self.start(["sh", "-c", "trap '' TERM; echo $$ > \"$1.tmp\" && mv \"$1.tmp\" \"$1\"; "
                        "while :; do sleep 1; done", "sh", self.path("child.pid")],
                       "--grace", "1")
        child = self.read_pid("child.pid")
        started = time.monotonic()
        p.send_signal(signal.SIGTERM)
        code, err = self.finish(p)
        elapsed = time.monotonic() - started
        self.assertEqual(code, 128 + signal.SIGKILL, err)
        self.assertGreaterEqual(elapsed, 0.9, "SIGKILL came before the grace period ended")
        self.assertLess(elapsed, 1.0 + DEADLINE_S)
        self.assertIn("SIGKILL", err)
        self.assert_dead(child)

    def test_pgid_file_written_at_start_and_removed_at_exit(self):
        pgid_file = self.path("task.pgid")
        p, child, _ = self.start_task_with_grandchild("--pgid-file", pgid_file)
        with open(pgid_file) as f:
            self.assertEqual(f.read(), "%d\n" % p.pid)  # setsid: pgid == launcher pid
        p.stdin.close()
        self.finish(p)
        self.assertFalse(os.path.exists(pgid_file))
        self.assertEqual([n for n in os.listdir(self.dir) if n.endswith(".tmp")], [])

    def test_signal_at_start_up_leaves_nothing_running(self):
        # A cancel racing the launcher's start: whichever side wins (launcher not yet
        # handling signals, child not yet started, child just started), it must end
        # quickly and leave no task behind.
        p = self.start(["sh", "-c", 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; sleep 60',
                        "sh", self.path("child.pid")], "--grace", "2")
        p.send_signal(signal.SIGTERM)
        code, err = self.finish(p)
        self.assertIn(code, (-signal.SIGTERM, 128 + signal.SIGTERM), err)
        if os.path.exists(self.path("child.pid")):
            self.assert_dead(self.read_pid("child.pid"))


if __name__ == "__main__":
    unittest.main()
