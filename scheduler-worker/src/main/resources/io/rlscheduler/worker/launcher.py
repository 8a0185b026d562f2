#!/usr/bin/env python3
"""rl-scheduler process supervisor: runs one task and guarantees that nothing it
started outlives it.

Usage: python3 -u launcher.py [--grace SECONDS] [--pgid-file PATH] [--no-stdin-watch]
                              [--keepalive-timeout SECONDS] -- CMD [ARGS...]

Why it exists: the worker (a JVM) cannot kill a process tree reliably. Java's
Process.destroy() signals one pid; a training script's data-loader workers, shells and
`nohup` children would survive it, and nothing at all happens if the JVM is
SIGKILLed. So the worker starts this launcher instead of the task:

* The launcher calls setsid(): it leads a new session and process group, and the task
  (CMD) and everything the task forks inherit that group. The group is the unit that
  gets killed.
* Its stdin is a pipe whose other end only the JVM holds. EOF on it means the JVM is
  gone, however it died (kill -9 included): the launcher then kills the group.
* --keepalive-timeout S: the worker writes a byte to that pipe each time it renews the
  task's lease in Redis. If nothing arrives for S seconds the worker is alive but stuck
  (frozen by SIGSTOP, paused by the OS, starved) and may have lost the lease without
  knowing: the launcher kills the group itself, before the lease can expire and the task
  run elsewhere. This is self-fencing that does not depend on the JVM being able to act.
* SIGTERM / SIGINT / SIGHUP to the launcher (the worker cancelling) kill the group.
* When CMD exits on its own, whatever it left running in the group is killed too.
* Killing the group = SIGTERM to the group, up to --grace seconds (default 5) for CMD
  to exit, then SIGKILL to every remaining member.
* --pgid-file: the pgid is written there at start and removed at exit, so a worker
  restarted after its own crash can find and kill groups whose launcher died with it.

Exit status: CMD's exit code, or 128 + N if CMD died from signal N (shell convention).
The launcher's own failures use the codes of env(1)/timeout(1): 125 bad usage or
launcher error, 126 CMD cannot be executed, 127 CMD not found.

Stdout belongs to the task: the launcher never writes to it. Its diagnostics go to
stderr, each line prefixed "rls-launcher: ".

Linux is the target (the group's members are listed from /proc). Elsewhere the final
SIGKILL goes to the whole group including the launcher itself, as its last act.

Standard library only, python3 >= 3.8.
"""

import errno
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time

PREFIX = "rls-launcher: "
EXIT_USAGE = 125
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
DEFAULT_GRACE_S = 5.0
# After SIGKILL the members normally vanish within milliseconds; one stuck in an
# uninterruptible sleep (a hung GPU driver call) may not. Past this we stop waiting and
# keep the pgid file, so that the worker's leftover sweep can try again later.
KILL_WAIT_S = 10.0
POLL_S = 0.05

USAGE = ("usage: launcher.py [--grace SECONDS] [--pgid-file PATH] [--no-stdin-watch] "
         "[--keepalive-timeout SECONDS] "
         "-- CMD [ARGS...]")


# Diagnostics go to stderr from a thread of their own. stderr is a pipe to the worker JVM,
# shared with the task: when the JVM is frozen (the case the keepalive watchdog is for) and the
# task filled the pipe, a write blocks, and a launcher that wrote before it killed would never
# kill. The thread writes with os.write, holding no lock of sys.stderr, so neither the main
# thread nor the interpreter's exit can block behind it. At exit the launcher waits for it, at
# most LOG_FLUSH_S: the worker must read why the task stopped (the keepalive fence line) once its
# JVM thaws; the task's group is gone by then, so waiting holds nothing but this process. A JVM
# that died closed the pipe: the write fails at once.
LOG_FLUSH_S = 60.0
# How long a kill waits for its own diagnostic to be written first (see kill_group).
KILL_LOG_WAIT_S = 0.2
_log_queue = queue.Queue()
_log_thread = None


def _write_logs():
    while True:
        message = _log_queue.get()
        if message is None:
            return
        if isinstance(message, threading.Event):
            message.set()  # everything queued before it is written
            continue
        data = message.encode("utf-8", "replace")
        try:
            while data:
                try:
                    data = data[os.write(2, data):]
                except BlockingIOError:
                    # The task set O_NONBLOCK on the stderr it shares with us: wait as a
                    # blocking write would.
                    select.select([], [2], [])
        except OSError:
            pass  # a pipe to a JVM that has died: losing a diagnostic is fine


def log(message, own_line=False):
    """Queues a diagnostic line for stderr; never blocks. With own_line it starts with a line
    break: stderr is the task's too, and what it wrote last may not end its line, while the
    worker must see certain lines (the keepalive fence line) at the start of one."""
    write_stderr(("\n" if own_line else "") + PREFIX + message + "\n")


def write_stderr(text):
    """Queues text for stderr, after the diagnostics queued before it; never blocks."""
    global _log_thread
    if _log_thread is None:
        _log_thread = threading.Thread(target=_write_logs, name="rls-launcher-log", daemon=True)
        _log_thread.start()
    _log_queue.put(text)


def await_log(timeout):
    """Waits until the diagnostics queued so far are written, at most timeout seconds."""
    if _log_thread is not None:
        written = threading.Event()
        _log_queue.put(written)
        written.wait(timeout)


def flush_log(timeout=LOG_FLUSH_S):
    """Waits until the queued diagnostics are written, at most timeout seconds."""
    if _log_thread is not None:
        _log_queue.put(None)
        _log_thread.join(timeout)


class UsageError(Exception):
    pass


def parse_args(argv):
    grace, pgid_file, watch_stdin, keepalive = DEFAULT_GRACE_S, None, True, 0.0
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            cmd = argv[i + 1:]
            if not cmd:
                raise UsageError("no command after --")
            return grace, pgid_file, watch_stdin, keepalive, cmd
        if arg in ("--grace", "--pgid-file", "--keepalive-timeout"):
            if i + 1 >= len(argv):
                raise UsageError(arg + " needs a value")
            value = argv[i + 1]
            i += 2
        elif arg.startswith("--grace=") or arg.startswith("--pgid-file=") or arg.startswith("--keepalive-timeout="):
            arg, value = arg.split("=", 1)
            i += 1
        elif arg == "--no-stdin-watch":
            # For running the launcher by hand: a terminal or /dev/null on stdin would
            # otherwise read as "the JVM is gone".
            watch_stdin = False
            i += 1
            continue
        elif arg in ("-h", "--help"):
            raise UsageError("help")
        else:
            raise UsageError("unexpected argument %r (the command goes after --)" % arg)
        if arg == "--keepalive-timeout":
            try:
                keepalive = float(value)
            except ValueError:
                raise UsageError("--keepalive-timeout: %r is not a number" % value)
            if not (0 <= keepalive <= 86400):  # also rejects nan; 0 turns it off
                raise UsageError("--keepalive-timeout: %r is out of range (0 to 86400 seconds)" % value)
        elif arg == "--grace":
            try:
                grace = float(value)
            except ValueError:
                raise UsageError("--grace: %r is not a number" % value)
            if not (0 <= grace <= 3600):  # also rejects nan
                raise UsageError("--grace: %r is out of range (0 to 3600 seconds)" % value)
        else:
            if not value:
                raise UsageError("--pgid-file: empty path")
            pgid_file = value
    raise UsageError("missing -- before the command")


class Supervisor:
    def __init__(self, grace, pgid_file, watch_stdin, keepalive=0.0):
        self.grace = grace
        self.keepalive = keepalive
        self.pgid_file = pgid_file
        self.watch_stdin = watch_stdin
        self.stop_reason = None  # set once: why the group must be killed
        self.stop_signum = signal.SIGTERM
        self.child = None
        self.group_clean = True  # False: members may survive, keep the pgid file
        self.pid = os.getpid()
        self.pgid = None
        self.own_session = False
        self.wake_r = self.wake_w = None

    # ---- set-up ------------------------------------------------------------------

    def become_group_leader(self):
        try:
            os.setsid()
            self.own_session = True
        except OSError as e:
            # EPERM: we already lead a process group (e.g. started by a job-control
            # shell). That group is ours alone, so it serves just as well.
            if os.getpgrp() != self.pid:
                raise RuntimeError("setsid failed (%s) and this process leads no group" % e)
            log("setsid failed (%s); using the process group this launcher already leads" % e)
        self.pgid = os.getpgrp()

    def write_pgid_file(self):
        if not self.pgid_file:
            return
        # Written via rename so that a reader never sees an empty or partial number.
        tmp = "%s.%d.tmp" % (self.pgid_file, self.pid)
        with open(tmp, "w") as f:
            f.write("%d\n" % self.pgid)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.pgid_file)

    def remove_pgid_file(self):
        if self.pgid_file:
            try:
                os.unlink(self.pgid_file)
            except FileNotFoundError:
                pass
            except OSError as e:
                log("cannot remove pgid file %s: %s" % (self.pgid_file, e))

    def install_signal_handlers(self):
        # The self-pipe: the C-level handler writes the signal number to wake_w the moment
        # a signal arrives, so a signal landing between "check the flags" and "block in
        # select" still wakes select. No signal is ever lost to that race.
        self.wake_r, self.wake_w = os.pipe()
        for fd in (self.wake_r, self.wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(self.wake_w)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self.on_stop_signal)
        # A handler (rather than the default disposition) so that the child's exit also
        # wakes select at once, instead of at the next poll timeout.
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)

    def on_stop_signal(self, signum, frame):
        # Only a flag: signal handlers run between bytecodes of the main thread, so doing
        # real work here could re-enter whatever the main loop was in the middle of.
        # This handler also absorbs the SIGTERM the launcher sends its own group, which is
        # how it survives to do the SIGKILL escalation.
        if self.stop_reason is None:
            self.stop_reason = "received %s" % signal.Signals(signum).name
            self.stop_signum = signum

    # ---- group membership ----------------------------------------------------------

    def members(self):
        """Live processes of our group (or our session, which a task may have split into
        several groups), except the launcher, as (pid, pgrp) pairs. None where /proc is
        not available."""
        try:
            names = os.listdir("/proc")
        except OSError:
            return None
        found = []
        child_pid = self.child.pid if self.child is not None else None
        for name in names:
            if not name.isdigit():
                continue
            pid = int(name)
            if pid == self.pid:
                continue
            try:
                with open("/proc/%d/stat" % pid, "rb") as f:
                    stat = f.read()
            except OSError:
                continue  # exited meanwhile
            # The command name (field 2) may contain spaces and parentheses: parse after
            # its closing parenthesis. Then: state, ppid, pgrp, session.
            fields = stat[stat.rfind(b")") + 2:].split()
            try:
                state, pgrp, session = fields[0], int(fields[2]), int(fields[3])
            except (IndexError, ValueError):
                continue
            if state in (b"Z", b"X"):
                continue  # dead; only waiting to be reaped
            # The session test is safe because setsid made the session new: only our
            # descendants can be in it. The unreaped child counts even if it left both
            # (setsid of its own): its pid cannot have been reused while it is unreaped.
            if (pgrp == self.pgid or (self.own_session and session == self.pid)
                    or (pid == child_pid and self.child.returncode is None)):
                found.append((pid, pgrp))
        return found

    def signal_members(self, sig, members):
        for pid, _ in members:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
            except OSError as e:
                log("cannot send %s to %d: %s" % (signal.Signals(sig).name, pid, e))

    def reap(self):
        """Collect the child's status if it has exited; True once it has."""
        return self.child is None or self.child.poll() is not None

    def wait_until(self, done, timeout):
        """Poll done() until it is true or timeout seconds pass; wakes early on signals
        (SIGCHLD included) through the self-pipe."""
        deadline = time.monotonic() + timeout
        while True:
            self.reap()
            if done():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.sleep(min(remaining, POLL_S))

    def sleep(self, timeout):
        try:
            ready, _, _ = select.select([self.wake_r], [], [], timeout)
        except InterruptedError:
            return
        if ready:
            self.drain_wakeups()

    def drain_wakeups(self):
        try:
            while os.read(self.wake_r, 512):
                pass
        except BlockingIOError:
            pass

    # ---- killing the group -----------------------------------------------------------

    def kill_group(self, why):
        """SIGTERM the group, grace period, SIGKILL what is left. Returns True when no
        member is known to survive."""
        members = self.members()
        if members is not None and not members:
            return True
        # The keepalive fence line on a line of its own (at the cost of an empty stderr line
        # when the task's output did end its line): the worker reads why the task stopped from it.
        log("%s: sending SIGTERM to process group %d" % (why, self.pgid), own_line=why.startswith("no keepalive"))
        # Written before the task hears of the signal, so it cannot land inside a line the task
        # writes as it stops; waited for at most KILL_LOG_WAIT_S, so a full pipe (a frozen JVM)
        # still does not hold the kill up.
        await_log(KILL_LOG_WAIT_S)
        try:
            # killpg rather than one kill per member: it is atomic with respect to
            # fork, so a process forking right now cannot produce an unsignalled child.
            # It hits the launcher too; on_stop_signal absorbs that.
            os.killpg(self.pgid, signal.SIGTERM)
        except OSError as e:
            log("killpg SIGTERM failed: %s" % e)
        if members:
            # Members that moved to another group of our session missed the killpg.
            self.signal_members(signal.SIGTERM, [m for m in members if m[1] != self.pgid])

        # The grace period is for the task to save its state; it ends early once the
        # child and every other member are gone.
        def all_gone():
            if not self.reap():
                return False
            left = self.members()
            return left is None or not left  # without /proc only the child can be seen
        self.wait_until(all_gone, self.grace)

        if members is None:
            if self.reap():
                return True  # leftovers, if any, had their SIGTERM; we cannot see them
            return self.kill_group_including_self()
        if not self.members() and self.reap():
            return True
        log("grace period of %gs over: sending SIGKILL to what is left of group %d"
            % (self.grace, self.pgid))
        # SIGKILL member by member, never to the group: that would kill the launcher
        # before it reaps the child and reports. Repeated, because a member may fork
        # between the listing and its kill; killed processes fork no more, so it ends.
        deadline = time.monotonic() + KILL_WAIT_S
        while True:
            self.reap()
            left = self.members()
            if not left:
                return True
            if time.monotonic() >= deadline:
                log("processes %s of group %d survive SIGKILL (uninterruptible?); "
                    "keeping the pgid file for a later sweep"
                    % (" ".join(str(pid) for pid, _ in left), self.pgid))
                return False
            self.signal_members(signal.SIGKILL, left)
            self.sleep(POLL_S)

    def kill_group_including_self(self):
        # No /proc: members cannot be listed, so the group is SIGKILLed as a whole. That
        # includes the launcher, so everything that must happen before exit happens now.
        log("no /proc: sending SIGKILL to process group %d, launcher included" % self.pgid)
        flush_log(1.0)  # the SIGKILL ends this process too: written now or never
        self.remove_pgid_file()
        os.killpg(self.pgid, signal.SIGKILL)
        return True  # not reached

    # ---- main ------------------------------------------------------------------------

    def run(self, cmd):
        self.become_group_leader()
        # Handlers before the child exists: a cancel that arrives while it is being
        # started must not be lost, nor kill the launcher with the default action.
        self.install_signal_handlers()
        try:
            self.write_pgid_file()
        except OSError as e:
            log("cannot write pgid file %s: %s" % (self.pgid_file, e))
            return EXIT_USAGE

        try:
            return self.supervise(cmd)
        finally:
            # Every path ends here, an unexpected exception included (supervise has
            # killed the group by then).
            if self.group_clean:
                self.remove_pgid_file()

    def supervise(self, cmd):
        if self.stop_reason is not None:
            log("%s before the command started; not starting it" % self.stop_reason)
            return 128 + self.stop_signum
        try:
            self.child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL)
        except FileNotFoundError as e:
            log("cannot run %s: %s" % (cmd[0], e))
            return EXIT_NOT_FOUND
        except OSError as e:
            log("cannot run %s: %s" % (cmd[0], e))
            return EXIT_CANNOT_EXECUTE

        try:
            self.wait_for_child_or_stop()
        except BaseException:
            # A bug here must not leave the task running unsupervised.
            self.group_clean = self.kill_group("launcher error")
            raise

        if self.stop_reason is not None:
            self.group_clean = self.kill_group(self.stop_reason)
        else:
            # The child exited on its own; whatever it left behind goes too.
            self.group_clean = self.kill_group("command exited with status %d"
                                               % self.child.returncode)
        self.wait_for_child()
        code = self.child.returncode
        if code is None:
            return 128 + signal.SIGKILL  # unkillable; report it as killed
        return code if code >= 0 else 128 - code

    def wait_for_child_or_stop(self):
        # One select over the signal self-pipe and stdin, rather than a thread blocked in
        # read(): a reader thread would have to wake the main thread, and the only safe
        # way to do that from a signal handler's world is this same pipe anyway; one
        # loop also means one place that decides, with no lock and no thread to join.
        fds = [self.wake_r]
        if self.watch_stdin:
            fds.append(0)
        watch_keepalive = self.watch_stdin and self.keepalive > 0
        last_keepalive = time.monotonic()
        while self.stop_reason is None and self.child.poll() is None:
            timeout = 1.0
            if watch_keepalive:
                silent = time.monotonic() - last_keepalive
                if silent >= self.keepalive and self.keepalive_waiting():
                    # This process was not scheduled for a while (a starved machine): keepalives
                    # sent meanwhile are waiting in the pipe. They count; the read below drains them.
                    silent = 0.0
                    last_keepalive = time.monotonic()
                if silent >= self.keepalive:
                    # The worker recognises this message (PythonTaskExecutor.KEEPALIVE_FENCE_LINE,
                    # with the "rls-launcher: " prefix): keep its beginning unchanged.
                    self.stop_reason = ("no keepalive from the worker for %.1f s: it cannot renew the "
                                        "task's lease, so the task stops before the lease can expire" % silent)
                    break
                timeout = min(timeout, self.keepalive - silent)
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except InterruptedError:
                continue
            except OSError as e:
                if e.errno != errno.EBADF or len(fds) == 1:
                    raise
                # fd 0 not open at all: there is no worker end to watch, same as EOF.
                self.stop_reason = "stdin is closed (the worker is gone)"
                break
            if self.wake_r in ready:
                self.drain_wakeups()
            if len(fds) > 1 and fds[1] in ready:
                try:
                    data = os.read(fds[1], 65536)
                except OSError as e:
                    if e.errno in (errno.EAGAIN, errno.EINTR):
                        continue
                    data = b""  # an unreadable stdin means the JVM end is unusable too
                if not data and self.stop_reason is None:
                    self.stop_reason = "stdin closed (the worker is gone)"
                elif data:
                    # Each byte is a keepalive: the worker has just renewed the lease.
                    last_keepalive = time.monotonic()

    def keepalive_waiting(self):
        """Whether stdin has unread bytes (keepalives, or EOF, which the loop then handles)."""
        try:
            ready, _, _ = select.select([0], [], [], 0)
        except (OSError, ValueError):
            return False
        return bool(ready)

    def wait_for_child(self):
        # After SIGKILL the child is gone or will be shortly; an unkillable one (stuck in
        # the kernel) must not hang the launcher forever.
        try:
            self.child.wait(timeout=KILL_WAIT_S)
        except subprocess.TimeoutExpired:
            log("command %d did not exit even after SIGKILL" % self.child.pid)
            self.group_clean = False


def main(argv):
    try:
        return run_main(argv)
    finally:
        flush_log()


def run_main(argv):
    try:
        grace, pgid_file, watch_stdin, keepalive, cmd = parse_args(argv)
    except UsageError as e:
        if str(e) == "help":
            write_stderr(USAGE + "\n")  # stderr even for help: stdout is the task's
            return 0
        log(str(e))
        write_stderr(USAGE + "\n")
        return EXIT_USAGE
    try:
        return Supervisor(grace, pgid_file, watch_stdin, keepalive).run(cmd)
    except RuntimeError as e:
        log(str(e))
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
