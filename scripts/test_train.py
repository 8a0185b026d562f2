"""Tests of train.py: it learns, it is reproducible, it checkpoints and resumes exactly,
and it rejects bad parameters cleanly.

Run: python3 -m unittest discover -s scripts -p 'test_*.py'

Most runs are real subprocesses, as the worker starts them (exit codes, stdout
buffering, signals are part of the contract); the many small parameter checks call
main() in-process to keep the suite fast.
"""

import contextlib
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "train.py")
DEADLINE_S = 30.0  # for any single run; a default run takes well under a second

_spec = importlib.util.spec_from_file_location("rls_train", TRAIN)
train = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train)


def metrics(stdout):
    """The JSON objects of the RLS_METRIC lines, checking each line's format on the way."""
    found = []
    for line in stdout.splitlines():
        if line.startswith("RLS_METRIC "):
            text = line[len("RLS_METRIC "):]
            obj = json.loads(text)
            assert isinstance(obj, dict), line
            assert json.dumps(obj, separators=(",", ":")) == text, "not compact: " + line
            found.append(obj)
    return found


def final_metric(stdout):
    finals = [m for m in metrics(stdout) if m.get("final")]
    assert len(finals) == 1, finals
    return finals[0]


def episode_metrics(stdout):
    return [m for m in metrics(stdout) if "episode" in m]


def without_resume(metric):
    return {k: v for k, v in metric.items() if k != "resumed_from_episode"}


class Workspace:
    """A temporary directory standing in for one task: a shared checkpoint directory and
    one run directory per attempt, as the worker lays them out."""

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="rls-train-test-")
        self.root = self.tmp.name
        self.ck_dir = os.path.join(self.root, "checkpoints")
        self.attempts = 0

    def environ(self, **extra):
        self.attempts += 1
        env = {k: v for k, v in os.environ.items() if not k.startswith("RLS_")}
        env.update(RLS_TASK_ID="t-1", RLS_ATTEMPT=str(self.attempts),
                   RLS_RUN_DIR=os.path.join(self.root, "attempt-%d" % self.attempts),
                   RLS_CHECKPOINT_DIR=self.ck_dir)
        env.update(extra)
        return env

    @property
    def run_dir(self):
        return os.path.join(self.root, "attempt-%d" % self.attempts)

    @property
    def checkpoint(self):
        return os.path.join(self.ck_dir, "checkpoint.json")

    def start(self, *args, **extra_env):
        return subprocess.Popen([sys.executable, "-u", TRAIN] + list(args), cwd=self.root,
                                env=self.environ(**extra_env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True)

    def run(self, *args, **extra_env):
        p = self.start(*args, **extra_env)
        out, err = p.communicate(timeout=DEADLINE_S)
        return p.returncode, out, err

    def cleanup(self):
        self.tmp.cleanup()


def run_ok(test, ws, *args, **extra_env):
    code, out, err = ws.run(*args, **extra_env)
    test.assertEqual(code, 0, err)
    return out, err


class DefaultRuns(unittest.TestCase):
    """One uninterrupted default run per environment, shared by the tests below as the
    reference that reruns and resumed runs must reproduce."""

    @classmethod
    def setUpClass(cls):
        cls.ws = {}
        cls.out = {}
        for env in ("gridworld", "cartpole"):
            ws = Workspace()
            args = () if env == "gridworld" else ("--env", "cartpole")
            p = ws.start(*args)
            out, err = p.communicate(timeout=DEADLINE_S)
            if p.returncode != 0:
                raise AssertionError("default %s run failed: %s" % (env, err))
            cls.ws[env], cls.out[env] = ws, out

    @classmethod
    def tearDownClass(cls):
        for ws in cls.ws.values():
            ws.cleanup()

    # ---- learning --------------------------------------------------------------------

    def test_gridworld_learns_with_defaults(self):
        final = final_metric(self.out["gridworld"])
        # Random walking mostly ends in a pit (about -30); the shortest path scores +10.
        self.assertGreater(final["final_reward"], final["first_reward"] + 20, final)
        self.assertGreaterEqual(final["final_reward"], 5, final)

    def test_cartpole_learns_with_defaults(self):
        final = final_metric(self.out["cartpole"])
        # A random policy balances ~20 steps; the cap is 200.
        self.assertGreater(final["final_reward"], 2 * final["first_reward"], final)
        self.assertGreater(final["final_reward"], final["first_reward"] + 50, final)

    # ---- output format -----------------------------------------------------------------

    def test_metric_lines(self):
        for env in ("gridworld", "cartpole"):
            with self.subTest(env=env):
                out = self.out[env]
                per_episode = episode_metrics(out)
                self.assertEqual([m["episode"] for m in per_episode], list(range(1, 301)))
                for m in per_episode:
                    self.assertTrue({"episode", "reward", "steps", "reward_avg10"} <= set(m), m)
                if env == "gridworld":
                    self.assertIn("epsilon", per_episode[0])
                final = final_metric(out)
                self.assertEqual(final["episodes"], 300)
                self.assertEqual(final["resumed_from_episode"], 0)
                rewards = [m["reward"] for m in per_episode]
                self.assertAlmostEqual(final["first_reward"], sum(rewards[:30]) / 30, places=5)
                self.assertAlmostEqual(final["final_reward"], sum(rewards[-30:]) / 30, places=5)
                self.assertNotIn("RESUMED", out)
                # Human-readable lines are there too, and never look like metrics.
                self.assertIn("episode 300/300", out)

    # ---- determinism ---------------------------------------------------------------------

    def test_same_seed_same_metrics(self):
        for env in ("gridworld", "cartpole"):
            with self.subTest(env=env):
                ws = Workspace()
                self.addCleanup(ws.cleanup)
                args = () if env == "gridworld" else ("--env", "cartpole")
                out, _ = run_ok(self, ws, *args)
                self.assertEqual(metrics(out), metrics(self.out[env]))

    def test_other_seed_other_metrics(self):
        ws = Workspace()
        self.addCleanup(ws.cleanup)
        out, _ = run_ok(self, ws, "--env", "cartpole", "--episodes", "30", "--seed", "1")
        reference = [m["reward"] for m in episode_metrics(self.out["cartpole"])[:30]]
        self.assertNotEqual([m["reward"] for m in episode_metrics(out)], reference)

    # ---- files -----------------------------------------------------------------------------

    def test_checkpoint_and_run_files_written(self):
        for env, learner_type in (("gridworld", "q-table"), ("cartpole", "linear-softmax")):
            with self.subTest(env=env):
                ws = self.ws[env]
                with open(ws.checkpoint) as f:
                    ck = json.load(f)
                self.assertEqual(ck["format"], "rls-train-checkpoint/1")
                self.assertEqual(ck["episode"], 300)
                self.assertEqual(len(ck["rewards"]), 300)
                self.assertEqual(ck["params"]["env"], env)
                self.assertEqual(ck["params"]["seed"], 0)
                self.assertEqual(ck["learner"]["type"], learner_type)
                self.assertEqual(len(ck["rng_state"][1]), 625)  # Mersenne Twister state
                self.assertEqual([n for n in os.listdir(ws.ck_dir) if n != "checkpoint.json"], [],
                                 "temp files left behind")
                with open(os.path.join(ws.run_dir, "result.json")) as f:
                    result = json.load(f)
                self.assertEqual(without_resume(result)["final_reward"],
                                 final_metric(self.out[env])["final_reward"])
                self.assertEqual((result["task_id"], result["attempt"]), ("t-1", "1"))
                with open(os.path.join(ws.run_dir, "progress.csv")) as f:
                    self.assertEqual(len(f.read().splitlines()), 301)  # header + episodes

    # ---- kill and resume -----------------------------------------------------------------------

    def test_killed_run_resumes_to_the_same_result(self):
        for env in ("gridworld", "cartpole"):
            with self.subTest(env=env):
                self.check_kill_and_resume(env)

    def check_kill_and_resume(self, env):
        reference = self.out[env]
        ws = Workspace()
        self.addCleanup(ws.cleanup)
        args = () if env == "gridworld" else ("--env", "cartpole")
        # The delay stretches the run to ~3 s so the kill lands mid-run; it is not a
        # learning parameter, so the resumed attempt may run without it.
        p = ws.start(*args, "--episode-delay", "0.01")
        try:
            deadline = time.monotonic() + DEADLINE_S
            while not os.path.exists(ws.checkpoint):
                self.assertIsNone(p.poll(), "run ended before its first checkpoint")
                self.assertLess(time.monotonic(), deadline, "no checkpoint appeared")
                time.sleep(0.01)
            p.send_signal(signal.SIGKILL)  # no chance to clean up, as in a machine loss
            killed_out, _ = p.communicate(timeout=DEADLINE_S)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(p.returncode, -signal.SIGKILL)
        with open(ws.checkpoint) as f:
            at = json.load(f)["episode"]
        self.assertTrue(25 <= at < 300, at)
        killed = episode_metrics(killed_out)
        self.assertGreaterEqual(len(killed), at)
        self.assertEqual(killed, episode_metrics(reference)[:len(killed)])

        out, _ = run_ok(self, ws, *args)
        self.assertIn("RESUMED from episode %d" % at, out.splitlines())
        self.assertIn({"resumed_from_episode": at}, metrics(out))
        resumed = episode_metrics(out)
        self.assertEqual(resumed[0]["episode"], at + 1)
        # Episode by episode, and in the end, the same as never interrupted: the
        # checkpoint restored the generator's state exactly.
        self.assertEqual(resumed, episode_metrics(reference)[at:])
        final = final_metric(out)
        self.assertEqual(final["resumed_from_episode"], at)
        self.assertEqual(without_resume(final), without_resume(final_metric(reference)))

    def test_finished_run_resumes_at_its_end(self):
        # An attempt killed after its last checkpoint but before the worker recorded it:
        # the retry must report, not train again.
        ws = Workspace()
        self.addCleanup(ws.cleanup)
        run_ok(self, ws, "--episodes", "20")
        out, _ = run_ok(self, ws, "--episodes", "20")
        self.assertIn("RESUMED from episode 20", out)
        self.assertEqual(episode_metrics(out), [])
        self.assertEqual(final_metric(out)["resumed_from_episode"], 20)


class CheckpointEdgeCases(unittest.TestCase):

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.cleanup)

    def test_checkpoint_of_other_parameters_is_ignored(self):
        run_ok(self, self.ws, "--episodes", "30", "--seed", "1")
        out, err = run_ok(self, self.ws, "--episodes", "30", "--seed", "2")
        self.assertNotIn("RESUMED", out)
        self.assertIn("other parameters (seed differ)", err)
        self.assertEqual(final_metric(out)["resumed_from_episode"], 0)
        self.assertEqual(len(episode_metrics(out)), 30)

    def test_corrupt_checkpoint_is_ignored(self):
        os.makedirs(self.ws.ck_dir)
        for content in ("{not json", "[1, 2]", json.dumps({"format": "rls-train-checkpoint/1"})):
            with self.subTest(content=content):
                with open(self.ws.checkpoint, "w") as f:
                    f.write(content)
                out, err = run_ok(self, self.ws, "--episodes", "10")
                self.assertIn("starting fresh", err)
                self.assertNotIn("RESUMED", out)
                self.assertEqual(len(episode_metrics(out)), 10)

    def test_checkpoint_every_zero_writes_none(self):
        run_ok(self, self.ws, "--episodes", "10", "--checkpoint-every", "0")
        self.assertFalse(os.path.exists(self.ws.checkpoint))

    def test_default_directories_under_the_working_directory(self):
        env = {k: v for k, v in os.environ.items() if not k.startswith("RLS_")}
        p = subprocess.run([sys.executable, TRAIN, "--episodes", "5"], cwd=self.ws.root, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=DEADLINE_S)
        self.assertEqual(p.returncode, 0, p.stderr)
        local = os.path.join(self.ws.root, "runs", "local")
        self.assertTrue(os.path.exists(os.path.join(local, "checkpoints", "checkpoint.json")))
        self.assertTrue(os.path.exists(os.path.join(local, "run", "result.json")))


class Parameters(unittest.TestCase):

    def setUp(self):
        self.ws = Workspace()
        self.addCleanup(self.ws.cleanup)

    def write_params(self, obj):
        path = os.path.join(self.ws.root, "params.json")
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    def in_process(self, *args, **extra_env):
        """main() in this process: (exit code, stdout, stderr)."""
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = train.main(list(args), self.ws.environ(**extra_env))
            except SystemExit as e:
                code = e.code
        return code, out.getvalue(), err.getvalue()

    def test_params_file_with_command_line_override(self):
        path = self.write_params({"episodes": 40, "epsilon-decay": 0.9, "seed": 3,
                                  "checkpoint_every": 10})
        out, _ = run_ok(self, self.ws, "--seed", "4", RLS_PARAMS_FILE=path)
        final = final_metric(out)
        self.assertEqual(final["episodes"], 40)
        with open(os.path.join(self.ws.run_dir, "result.json")) as f:
            params = json.load(f)["params"]
        self.assertEqual((params["seed"], params["epsilon_decay"], params["checkpoint_every"]),
                         (4, 0.9, 10))
        # The same values given only on the command line train exactly the same.
        other = Workspace()
        self.addCleanup(other.cleanup)
        same, _ = run_ok(self, other, "--episodes", "40", "--epsilon-decay", "0.9",
                         "--seed", "4", "--checkpoint-every", "10")
        self.assertEqual(metrics(same), metrics(out))

    def test_bad_params_file(self):
        cases = {
            "unknown key": ({"episodes": 10, "learning_rate": 0.1}, "unknown parameter 'learning_rate'"),
            "bad value": ({"gamma": 2}, "gamma: 2 is not allowed"),
            "boolean as number": ({"lr": True}, "lr: bad value True"),
            "not an object": ([1, 2], "must hold a JSON object"),
            "not JSON": ("{lr: 0.1", "is not valid JSON"),
            "same key twice": ({"epsilon_decay": 0.9, "epsilon-decay": 0.8}, "given twice"),
        }
        for name, (content, message) in cases.items():
            with self.subTest(name):
                code, _, err = self.in_process(RLS_PARAMS_FILE=self.write_params(content))
                self.assertEqual(code, 2)
                self.assertIn(message, err)
        code, _, err = self.in_process(RLS_PARAMS_FILE=os.path.join(self.ws.root, "missing.json"))
        self.assertEqual(code, 2)
        self.assertIn("cannot be read", err)

    def test_bad_parameters_exit_2_with_a_clear_message(self):
        cases = [
            (["--env", "gridworld", "--algo", "reinforce"], "does not fit --env gridworld"),
            (["--env", "cartpole", "--algo", "q-learning"], "does not fit --env cartpole"),
            (["--env", "mars"], "--env: 'mars' is not allowed"),
            (["--algo", "ppo"], "--algo: 'ppo' is not allowed"),
            (["--lr", "0"], "--lr: '0' is not allowed"),
            (["--lr", "-0.1"], "--lr: '-0.1' is not allowed"),
            (["--lr", "nan"], "--lr: bad value 'nan'"),
            (["--lr", "inf"], "--lr: bad value 'inf'"),
            (["--lr", "fast"], "--lr: bad value 'fast' (expected a number"),
            (["--gamma", "1.01"], "--gamma: '1.01' is not allowed (must be in [0, 1])"),
            (["--epsilon", "-1"], "--epsilon: '-1' is not allowed"),
            (["--epsilon-decay", "0"], "--epsilon-decay: '0' is not allowed"),
            (["--episodes", "0"], "--episodes: '0' is not allowed"),
            (["--episodes", "2.5"], "--episodes: bad value '2.5' (expected an integer"),
            (["--seed", "x"], "--seed: bad value 'x'"),
            (["--checkpoint-every", "-1"], "--checkpoint-every: '-1' is not allowed"),
            (["--episode-delay", "-1"], "--episode-delay: '-1' is not allowed"),
            (["--baseline", "maybe"], "--baseline: bad value 'maybe'"),
            (["--bogus", "1"], "unrecognized arguments: --bogus"),
            (["--lr"], "expected one argument"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                code, out, err = self.in_process(*args)
                self.assertEqual(code, 2)
                self.assertIn("train.py: error: ", err)
                self.assertIn(message, err)
                self.assertEqual(out, "")
        # And as a real process: exit status 2, message on stderr, nothing on stdout.
        code, out, err = self.ws.run("--gamma", "7")
        self.assertEqual((code, out), (2, ""))
        self.assertIn("train.py: error: --gamma: '7' is not allowed", err)
        self.assertNotIn("Traceback", err)

    def test_every_default_and_edge_combination_runs(self):
        # Each environment and algorithm with all other parameters at their defaults (none may
        # divide by zero), then edge values.
        combinations = [
            [], ["--env", "gridworld"], ["--algo", "q-learning"],
            ["--env", "cartpole"], ["--algo", "reinforce"],
            ["--env", "cartpole", "--algo", "reinforce", "--baseline", "false"],
        ]
        edges = [
            ["--episodes", "1"], ["--episodes", "9"], ["--checkpoint-every", "0"],
            ["--checkpoint-every", "1"], ["--checkpoint-every", "1000"], ["--gamma", "0"],
            ["--gamma", "1"], ["--epsilon", "0"], ["--epsilon-decay", "1"], ["--seed", "-5"],
            ["--lr", "1"],
        ]
        for env in ("gridworld", "cartpole"):
            for edge in edges:
                combinations.append(["--env", env, "--episodes", "12"] + edge)
            combinations.append(["--env", env, "--episodes", "1", "--gamma", "0", "--epsilon", "0",
                                 "--checkpoint-every", "1"])
        for args in combinations:
            with self.subTest(args=args):
                ws = Workspace()
                self.addCleanup(ws.cleanup)
                self.ws = ws
                code, out, err = self.in_process(*args)
                self.assertEqual(code, 0, err)
                self.assertEqual(err, "")
                final = final_metric(out)
                self.assertGreaterEqual(final["episodes"], 1)

    def test_metric_lines_are_thinned_for_long_runs(self):
        code, out, _ = self.in_process("--episodes", "2500", "--checkpoint-every", "0")
        self.assertEqual(code, 0)
        episodes = [m["episode"] for m in episode_metrics(out)]
        self.assertEqual(episodes, list(range(2, 2501, 2)))  # every 2nd: <= ~1000 lines


if __name__ == "__main__":
    unittest.main()
