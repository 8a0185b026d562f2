#!/usr/bin/env python3
"""A small but real reinforcement-learning training script for rl-scheduler.

It is the reference task the scheduler runs: it learns something measurable, prints
structured metrics the worker streams back, checkpoints so that a re-queued attempt
resumes where the killed one stopped, and is exactly reproducible per seed, so that
"resumed" can be checked against "never interrupted".

Standard library only (python3 >= 3.8): the GPU machines must not need a virtualenv
to run the scheduler's own smoke test.

Environments and algorithms (each environment has exactly one matching algorithm):
  gridworld + q-learning   tabular Q-learning, epsilon-greedy with per-episode decay
  cartpole  + reinforce    REINFORCE, linear softmax policy over the 4 state features

Parameters: --name value on the command line, or a JSON object in the file named by
RLS_PARAMS_FILE (keys may use '-' or '_'); the command line wins over the file.
Environment (set by the worker; all optional):
  RLS_TASK_ID, RLS_ATTEMPT   identify the run in progress lines and result.json
  RLS_RUN_DIR                per-attempt directory: progress.csv, result.json
                             (default ./runs/local/run)
  RLS_CHECKPOINT_DIR         shared by all attempts of a task: checkpoint.json
                             (default ./runs/local/checkpoints)
  RLS_PARAMS_FILE            JSON parameters (see above)
Output (stdout, flushed per line):
  RLS_METRIC {"episode":12,"reward":-3.0,...}   one compact JSON object per line
  RLS_CHECKPOINT {}                              after each checkpoint is saved: the worker
                                                 commits the checkpoint directory to the store
  human-readable progress lines (never starting with RLS_METRIC)
Exit codes: 0 done, 2 bad parameters (message on stderr).
"""

import argparse
import csv
import json
import math
import os
import random
import sys
import tempfile
import time

CHECKPOINT_FORMAT = "rls-train-checkpoint/1"
CHECKPOINT_NAME = "checkpoint.json"
METRIC_PREFIX = "RLS_METRIC "
CHECKPOINT_LINE = "RLS_CHECKPOINT {}"

ENV_ALGO = {"gridworld": "q-learning", "cartpole": "reinforce"}
ALGO_ENV = {algo: env for env, algo in ENV_ALGO.items()}

# Learning rates differ by two orders of magnitude between a tabular update and a policy
# gradient step, so one global default would make one of the two pairs diverge or crawl.
DEFAULT_LR = {"q-learning": 0.1, "reinforce": 0.01}


class UsageError(Exception):
    """A bad parameter: reported as an argparse error (stderr, exit code 2)."""


# --------------------------------------------------------------------------------------
# Environments
# --------------------------------------------------------------------------------------

class GridWorld:
    """Deterministic grid: reach G from S, avoid the pits X, walls # block moves.

    Every move costs 1 so the agent prefers short paths; a pit ends the episode with a
    large penalty, so a random walker scores far below a learned policy (the test relies
    on that gap). Episodes are capped so an untrained agent cannot wander forever.
    """

    LAYOUT = (
        "S..#..",
        ".X....",
        ".X.##.",
        "...X..",
        "#X...X",
        "...#.G",
    )
    STEP_REWARD = -1.0
    PIT_REWARD = -20.0
    GOAL_REWARD = 20.0
    MAX_STEPS = 100
    MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))  # up, down, left, right

    def __init__(self):
        self.rows = len(self.LAYOUT)
        self.cols = len(self.LAYOUT[0])
        self.n_states = self.rows * self.cols
        self.n_actions = len(self.MOVES)
        for r, line in enumerate(self.LAYOUT):
            for c, cell in enumerate(line):
                if cell == "S":
                    self.start = (r, c)
        self.pos = self.start
        self.t = 0

    def reset(self, rng):
        # The start is fixed; rng is accepted so that both environments share one
        # interface (CartPole draws its initial state).
        self.pos = self.start
        self.t = 0
        return self._index(self.pos)

    def step(self, action):
        dr, dc = self.MOVES[action]
        r, c = self.pos[0] + dr, self.pos[1] + dc
        if 0 <= r < self.rows and 0 <= c < self.cols and self.LAYOUT[r][c] != "#":
            self.pos = (r, c)
        self.t += 1
        cell = self.LAYOUT[self.pos[0]][self.pos[1]]
        if cell == "G":
            return self._index(self.pos), self.STEP_REWARD + self.GOAL_REWARD, True
        if cell == "X":
            return self._index(self.pos), self.STEP_REWARD + self.PIT_REWARD, True
        return self._index(self.pos), self.STEP_REWARD, self.t >= self.MAX_STEPS

    def _index(self, pos):
        return pos[0] * self.cols + pos[1]


class CartPole:
    """Classic cart-pole (Barto, Sutton & Anderson 1983), same constants and explicit
    Euler integration as Gym's CartPole-v0: +1 reward per step survived, failure when
    the pole leans past 12 degrees or the cart leaves the track, capped at 200 steps."""

    GRAVITY = 9.8
    MASS_CART = 1.0
    MASS_POLE = 0.1
    TOTAL_MASS = MASS_CART + MASS_POLE
    HALF_LENGTH = 0.5  # half the pole's length
    POLE_MASS_LENGTH = MASS_POLE * HALF_LENGTH
    FORCE = 10.0
    TAU = 0.02  # seconds per step
    THETA_LIMIT = 12 * 2 * math.pi / 360
    X_LIMIT = 2.4
    MAX_STEPS = 200

    n_actions = 2

    def __init__(self):
        self.state = [0.0, 0.0, 0.0, 0.0]
        self.t = 0

    def reset(self, rng):
        self.state = [rng.uniform(-0.05, 0.05) for _ in range(4)]
        self.t = 0
        return tuple(self.state)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.FORCE if action == 1 else -self.FORCE
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + self.POLE_MASS_LENGTH * theta_dot * theta_dot * sin) / self.TOTAL_MASS
        theta_acc = (self.GRAVITY * sin - cos * temp) / (
            self.HALF_LENGTH * (4.0 / 3.0 - self.MASS_POLE * cos * cos / self.TOTAL_MASS))
        x_acc = temp - self.POLE_MASS_LENGTH * theta_acc * cos / self.TOTAL_MASS
        x += self.TAU * x_dot
        x_dot += self.TAU * x_acc
        theta += self.TAU * theta_dot
        theta_dot += self.TAU * theta_acc
        self.state = [x, x_dot, theta, theta_dot]
        self.t += 1
        failed = abs(x) > self.X_LIMIT or abs(theta) > self.THETA_LIMIT
        return tuple(self.state), 1.0, failed or self.t >= self.MAX_STEPS


# --------------------------------------------------------------------------------------
# Learners. Each keeps all of its mutable state in plain lists/floats so a checkpoint
# can hold it exactly (JSON floats round-trip bit for bit through repr).
# --------------------------------------------------------------------------------------

class QLearning:
    def __init__(self, env, params):
        self.env = env
        self.lr = params["lr"]
        self.gamma = params["gamma"]
        self.epsilon = params["epsilon"]
        self.decay = params["epsilon_decay"]
        self.q = [[0.0] * env.n_actions for _ in range(env.n_states)]

    def _greedy(self, state, rng):
        row = self.q[state]
        best = max(row)
        # Break ties at random: with an all-zero table, "first best" would always walk
        # up into the border and learning would start much later.
        candidates = [a for a, v in enumerate(row) if v == best]
        return candidates[0] if len(candidates) == 1 else rng.choice(candidates)

    def run_episode(self, rng):
        state = self.env.reset(rng)
        total, steps, done = 0.0, 0, False
        while not done:
            if rng.random() < self.epsilon:
                action = rng.randrange(self.env.n_actions)
            else:
                action = self._greedy(state, rng)
            nxt, reward, done = self.env.step(action)
            # A terminal state has no future; the time-limit cut is treated the same way,
            # which is a slight bias that does not matter once paths are short.
            target = reward if done else reward + self.gamma * max(self.q[nxt])
            self.q[state][action] += self.lr * (target - self.q[state][action])
            state = nxt
            total += reward
            steps += 1
        self.epsilon *= self.decay
        return total, steps

    def metrics(self):
        return {"epsilon": round(self.epsilon, 6)}

    def state_dict(self):
        return {"type": "q-table", "q": self.q, "epsilon": self.epsilon}

    def load_state_dict(self, d):
        if d.get("type") != "q-table" or [len(r) for r in d["q"]] != [len(r) for r in self.q]:
            raise ValueError("learner state is not a matching Q-table")
        self.q = [[float(v) for v in row] for row in d["q"]]
        self.epsilon = float(d["epsilon"])


class Reinforce:
    """Monte-Carlo policy gradient with pi(a|s) = softmax(W s + b).

    With the baseline on, each episode's returns are whitened (minus their mean, divided
    by their standard deviation): the mean is the baseline that cuts the gradient's
    variance. With it off they are only scaled, so the step size stays comparable and
    the two variants can be compared at the same learning rate.
    """

    def __init__(self, env, params):
        self.env = env
        self.lr = params["lr"]
        self.gamma = params["gamma"]
        self.baseline = params["baseline"]
        # One weight row per action over (x, x_dot, theta, theta_dot, bias). Zero start:
        # the first policy is uniform random, whatever the seed.
        self.w = [[0.0] * 5 for _ in range(env.n_actions)]

    def _probs(self, feats):
        logits = [sum(wi * fi for wi, fi in zip(row, feats)) for row in self.w]
        top = max(logits)  # shift for numerical safety before exp
        exps = [math.exp(v - top) for v in logits]
        total = sum(exps)
        return [e / total for e in exps]

    def run_episode(self, rng):
        state = self.env.reset(rng)
        trajectory = []  # (features, action, probabilities, reward)
        done = False
        while not done:
            feats = state + (1.0,)
            probs = self._probs(feats)
            u, action, acc = rng.random(), len(probs) - 1, 0.0
            for a, p in enumerate(probs):
                acc += p
                if u < acc:
                    action = a
                    break
            state, reward, done = self.env.step(action)
            trajectory.append((feats, action, probs, reward))

        returns, g = [], 0.0
        for _, _, _, reward in reversed(trajectory):
            g = reward + self.gamma * g
            returns.append(g)
        returns.reverse()
        n = len(returns)
        mean = sum(returns) / n
        std = math.sqrt(sum((g - mean) ** 2 for g in returns) / n)
        # A one-step episode (or gamma = 0 with constant rewards) has std 0: no scaling then,
        # instead of dividing by zero.
        scale = std if std > 1e-8 else 1.0
        center = mean if self.baseline else 0.0
        advantages = [(g - center) / scale for g in returns]

        # grad log pi(a|s) wrt row b = (1[a == b] - pi_b) * s, summed over the episode as in
        # textbook REINFORCE. (Averaging would need a ~30x larger rate, and then diverges on
        # some seeds.)
        grad = [[0.0] * 5 for _ in self.w]
        for (feats, action, probs, _), adv in zip(trajectory, advantages):
            for b, row in enumerate(grad):
                coef = adv * ((1.0 if b == action else 0.0) - probs[b])
                for i, f in enumerate(feats):
                    row[i] += coef * f
        for row, grow in zip(self.w, grad):
            for i, gi in enumerate(grow):
                row[i] += self.lr * gi
        return float(sum(r for _, _, _, r in trajectory)), n

    def metrics(self):
        return {}

    def state_dict(self):
        return {"type": "linear-softmax", "weights": self.w}

    def load_state_dict(self, d):
        if d.get("type") != "linear-softmax" or [len(r) for r in d["weights"]] != [len(r) for r in self.w]:
            raise ValueError("learner state is not matching policy weights")
        self.w = [[float(v) for v in row] for row in d["weights"]]


# --------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------

def _finite(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ValueError("expected a number")
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _to_float(value):
    if isinstance(value, bool):  # JSON true is an int in Python; never a rate
        raise ValueError("expected a number, got a boolean")
    return _finite(value)


def _to_int(value):
    if isinstance(value, bool):
        raise ValueError("expected an integer, got a boolean")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("expected an integer")
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip(), 10)
    except ValueError:
        raise ValueError("expected an integer")


def _to_bool(value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true/false")


def _to_str(value):
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


# name -> (converter, check or None, description of the allowed range, help)
PARAMS = {
    "env": (_to_str, lambda v: v in ENV_ALGO, "one of " + ", ".join(ENV_ALGO),
            "environment (default gridworld, or the one matching --algo)"),
    "algo": (_to_str, lambda v: v in ALGO_ENV, "one of " + ", ".join(ALGO_ENV),
             "algorithm (default: the one matching --env)"),
    "lr": (_to_float, lambda v: v > 0, "> 0",
           "learning rate (default %s)" % ", ".join("%s for %s" % (v, k) for k, v in DEFAULT_LR.items())),
    "gamma": (_to_float, lambda v: 0 <= v <= 1, "in [0, 1]", "discount factor (default 0.99)"),
    "epsilon": (_to_float, lambda v: 0 <= v <= 1, "in [0, 1]",
                "q-learning: initial exploration rate (default 1.0)"),
    "epsilon_decay": (_to_float, lambda v: 0 < v <= 1, "in (0, 1]",
                      "q-learning: epsilon is multiplied by this after each episode (default 0.98)"),
    "episodes": (_to_int, lambda v: 1 <= v <= 10_000_000, "in [1, 10000000]",
                 "number of episodes (default 300)"),
    "seed": (_to_int, None, "an integer", "random seed (default 0)"),
    "checkpoint_every": (_to_int, lambda v: v >= 0, ">= 0",
                         "episodes between checkpoints; 0 disables checkpoints and resuming (default 25)"),
    "episode_delay": (_to_float, lambda v: 0 <= v <= 3600, "in [0, 3600]",
                      "seconds to sleep after each episode, to make a run last (default 0)"),
    "baseline": (_to_bool, None, "true or false",
                 "reinforce: subtract the mean return as a baseline (default true)"),
}

DEFAULTS = {
    "env": None, "algo": None, "lr": None, "gamma": 0.99, "epsilon": 1.0,
    "epsilon_decay": 0.98, "episodes": 300, "seed": 0, "checkpoint_every": 25,
    "episode_delay": 0.0, "baseline": True,
}

# Parameters that change what is learned. A checkpoint resumes only a run with the same
# values; the delay and checkpoint interval only change timing, so an attempt may differ.
RESULT_PARAMS = ("env", "algo", "lr", "gamma", "epsilon", "epsilon_decay", "episodes",
                 "seed", "baseline")


def convert(name, raw, source):
    """Convert and range-check one value; source names where it came from, so that the
    message points at the exact flag or file key to fix."""
    converter, check, allowed, _ = PARAMS[name]
    try:
        value = converter(raw)
    except (TypeError, ValueError) as e:
        raise UsageError("%s: bad value %r (%s; must be %s)" % (source, raw, e, allowed))
    if check is not None and not check(value):
        raise UsageError("%s: %r is not allowed (must be %s)" % (source, raw, allowed))
    return value


def read_params_file(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise UsageError("RLS_PARAMS_FILE %s cannot be read: %s" % (path, e))
    except ValueError as e:
        raise UsageError("RLS_PARAMS_FILE %s is not valid JSON: %s" % (path, e))
    if not isinstance(data, dict):
        raise UsageError("RLS_PARAMS_FILE %s must hold a JSON object, not %s" % (path, type(data).__name__))
    params = {}
    for key, raw in data.items():
        name = str(key).replace("-", "_")
        if name not in PARAMS:
            # Strict on purpose: a misspelt key would otherwise silently train with a
            # default, and the lab would only notice after the GPU hours are spent.
            raise UsageError("RLS_PARAMS_FILE %s: unknown parameter %r (known: %s)"
                             % (path, key, ", ".join(n.replace("_", "-") for n in PARAMS)))
        if name in params:
            raise UsageError("RLS_PARAMS_FILE %s: parameter %s given twice" % (path, name))
        params[name] = convert(name, raw, "RLS_PARAMS_FILE %s: %s" % (path, key))
    return params


def build_parser():
    parser = argparse.ArgumentParser(
        prog="train.py", allow_abbrev=False,
        description="Train a tabular Q-learner on a gridworld or a REINFORCE policy on "
                    "CartPole, with checkpoints and RLS_METRIC lines for rl-scheduler.",
        epilog="Parameters may also come from a JSON object in $RLS_PARAMS_FILE; "
               "command-line values win.")
    for name, (_, _, _, help_text) in PARAMS.items():
        # SUPPRESS: only values really given on the command line appear, so that they
        # can be layered over the file and the defaults.
        parser.add_argument("--" + name.replace("_", "-"), dest=name, default=argparse.SUPPRESS,
                            metavar=name.upper(), help=help_text)
    return parser


def resolve_params(argv, environ):
    """Defaults < RLS_PARAMS_FILE < command line; then cross-parameter checks."""
    parser = build_parser()
    cli = vars(parser.parse_args(argv))
    try:
        params = dict(DEFAULTS)
        path = environ.get("RLS_PARAMS_FILE")
        if path:
            params.update(read_params_file(path))
        for name, raw in cli.items():
            params[name] = convert(name, raw, "--" + name.replace("_", "-"))

        env, algo = params["env"], params["algo"]
        if env is None and algo is None:
            env, algo = "gridworld", "q-learning"
        elif env is None:
            env = ALGO_ENV[algo]
        elif algo is None:
            algo = ENV_ALGO[env]
        if ENV_ALGO[env] != algo:
            raise UsageError("--algo %s does not fit --env %s (use %s with %s, %s with %s)"
                             % (algo, env, "q-learning", "gridworld", "reinforce", "cartpole"))
        params["env"], params["algo"] = env, algo
        if params["lr"] is None:
            params["lr"] = DEFAULT_LR[algo]
    except UsageError as e:
        parser.error(str(e))  # prints usage and the message on stderr, exits 2
    return params


# --------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------

def atomic_write_json(path, obj):
    """Write obj so that a reader (or a resumed attempt) sees the old file or the new
    one, never a torn one, even if this process is SIGKILLed mid-write."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    # Make the rename itself durable (a machine crash, not just a process kill).
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the data is already safe


def remove_stale_temp_files(directory, prefix, max_age_s=600.0):
    # A SIGKILL between mkstemp and os.replace leaves a temp file behind. Only old ones
    # are removed: a young one may belong to a concurrent writer mid-replace.
    try:
        names = os.listdir(directory)
    except OSError:
        return
    now = time.time()
    for name in names:
        if name.startswith(prefix) and name.endswith(".tmp"):
            path = os.path.join(directory, name)
            try:
                if now - os.stat(path).st_mtime > max_age_s:
                    os.unlink(path)
            except OSError:
                pass


def rng_state_to_json(state):
    version, internal, gauss_next = state
    return [version, list(internal), gauss_next]


def rng_state_from_json(data):
    version, internal, gauss_next = data
    return (version, tuple(internal), gauss_next)


def load_checkpoint(path, params, learner, rng):
    """Restore learner and rng from path; return (episode, rewards, steps) or None to
    start fresh. Never raises for a bad checkpoint: a run must not be lost to one."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            ck = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        warn("checkpoint %s is unreadable (%s); starting fresh" % (path, e))
        return None
    if not isinstance(ck, dict) or ck.get("format") != CHECKPOINT_FORMAT:
        warn("checkpoint %s has an unknown format; starting fresh" % path)
        return None
    wanted = {k: params[k] for k in RESULT_PARAMS}
    stored = ck.get("params") if isinstance(ck.get("params"), dict) else {}
    if stored != wanted:
        diff = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        warn("checkpoint %s was written with other parameters (%s differ); starting fresh"
             % (path, ", ".join(diff)))
        return None
    try:
        episode = int(ck["episode"])
        rewards = [float(r) for r in ck["rewards"]]
        steps = [int(s) for s in ck["steps"]]
        if not (0 <= episode <= params["episodes"] and len(rewards) == episode == len(steps)):
            raise ValueError("episode counter and history disagree")
        learner.load_state_dict(ck["learner"])
        rng.setstate(rng_state_from_json(ck["rng_state"]))
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as e:
        warn("checkpoint %s is inconsistent (%s); starting fresh" % (path, e))
        return None
    return episode, rewards, steps


# --------------------------------------------------------------------------------------
# Main loop
# --------------------------------------------------------------------------------------

def warn(message):
    print("train.py: warning: " + message, file=sys.stderr, flush=True)


def say(message):
    print(message, flush=True)


def emit_metric(obj):
    # Compact and flushed: the worker parses each line as it arrives.
    print(METRIC_PREFIX + json.dumps(obj, separators=(",", ":")), flush=True)


def mean(values):
    return sum(values) / len(values) if values else 0.0


def main(argv=None, environ=None):
    environ = os.environ if environ is None else environ
    params = resolve_params(sys.argv[1:] if argv is None else argv, environ)

    task_id = environ.get("RLS_TASK_ID", "local")
    attempt = environ.get("RLS_ATTEMPT", "0")
    run_dir = environ.get("RLS_RUN_DIR") or os.path.join("runs", "local", "run")
    ck_dir = environ.get("RLS_CHECKPOINT_DIR") or os.path.join("runs", "local", "checkpoints")
    os.makedirs(run_dir, exist_ok=True)
    os.makedirs(ck_dir, exist_ok=True)
    ck_path = os.path.join(ck_dir, CHECKPOINT_NAME)

    env = GridWorld() if params["env"] == "gridworld" else CartPole()
    learner = QLearning(env, params) if params["algo"] == "q-learning" else Reinforce(env, params)
    # One generator for everything (environment resets and the agent's choices), owned by
    # this run: its state in the checkpoint is then all a resumed run needs to continue
    # exactly as an uninterrupted one would have.
    rng = random.Random(params["seed"])

    episodes = params["episodes"]
    ck_every = params["checkpoint_every"]
    say("train.py: task %s attempt %s: %s with %s, %d episodes, seed %d, lr %g, gamma %g"
        % (task_id, attempt, params["env"], params["algo"], episodes, params["seed"],
           params["lr"], params["gamma"]))

    start, rewards, steps = 0, [], []
    if ck_every > 0:
        remove_stale_temp_files(ck_dir, "." + CHECKPOINT_NAME + ".")
        restored = load_checkpoint(ck_path, params, learner, rng)
        if restored is not None:
            start, rewards, steps = restored
            say("RESUMED from episode %d" % start)
            emit_metric({"resumed_from_episode": start})

    # At most ~1000 metric lines and 10 progress lines per run, however long it is.
    metric_every = max(1, episodes // 1000)
    progress_every = max(1, episodes // 10)
    window = max(1, episodes // 10)  # "10%" of the run, never empty

    def save_checkpoint(done):
        atomic_write_json(ck_path, {
            "format": CHECKPOINT_FORMAT,
            "params": {k: params[k] for k in RESULT_PARAMS},
            "episode": done,
            "rewards": rewards,
            "steps": steps,
            "rng_state": rng_state_to_json(rng.getstate()),
            "learner": learner.state_dict(),
            "written_by": {"task_id": task_id, "attempt": attempt},
        })

    with open(os.path.join(run_dir, "progress.csv"), "w", newline="", encoding="utf-8") as pf:
        progress = csv.writer(pf)
        progress.writerow(["episode", "reward", "steps"] + sorted(learner.metrics()))
        for episode in range(start + 1, episodes + 1):
            reward, n_steps = learner.run_episode(rng)
            rewards.append(reward)
            steps.append(n_steps)
            extra = learner.metrics()
            progress.writerow([episode, reward, n_steps] + [extra[k] for k in sorted(extra)])
            pf.flush()
            if episode % metric_every == 0 or episode == episodes:
                metric = {"episode": episode, "reward": reward, "steps": n_steps,
                          "reward_avg10": round(mean(rewards[-10:]), 6)}
                metric.update(extra)
                emit_metric(metric)
            if episode % progress_every == 0 or episode == episodes:
                say("episode %d/%d: reward %.1f, mean of last %d %.2f%s"
                    % (episode, episodes, reward, min(window, len(rewards)),
                       mean(rewards[-window:]),
                       "".join(", %s %s" % kv for kv in sorted(extra.items()))))
            # The last episode is saved too, so that an attempt killed after finishing but
            # before its end is recorded does not train again: its retry resumes at the end.
            if ck_every > 0 and (episode % ck_every == 0 or episode == episodes):
                save_checkpoint(episode)
                # One file replaced atomically: the whole directory is a consistent checkpoint,
                # and this line has the worker commit it to the artifact store.
                print(CHECKPOINT_LINE, flush=True)
            if params["episode_delay"] > 0:
                time.sleep(params["episode_delay"])

    final = {
        "final": True,
        "episodes": episodes,
        "first_reward": round(mean(rewards[:window]), 6),
        "final_reward": round(mean(rewards[-window:]), 6),
        "window": window,
        "resumed_from_episode": start,
    }
    final.update(learner.metrics())
    emit_metric(final)
    say("done: mean reward %.2f over the first %d episodes, %.2f over the last %d"
        % (final["first_reward"], window, final["final_reward"], window))
    result = dict(final, task_id=task_id, attempt=attempt,
                  params={k: params[k] for k in PARAMS})
    atomic_write_json(os.path.join(run_dir, "result.json"), result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
