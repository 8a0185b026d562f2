"""Tests of rls_checkpoint.py, the helper that saves each checkpoint into a directory of its own."""

import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock

import rls_checkpoint


class RlsCheckpointTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp()
        patcher = mock.patch.dict(os.environ, {"RLS_CHECKPOINT_DIR": self.dir})
        patcher.start()
        self.addCleanup(patcher.stop)

    def save(self, text):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            with rls_checkpoint.new() as d:
                with open(os.path.join(d, "state.txt"), "w") as f:
                    f.write(text)
                # Not marked, not visible under its final name, while it is written.
                self.assertIsNone(rls_checkpoint.latest() if text == "first" else None)
        return out.getvalue()

    def test_each_checkpoint_gets_a_new_directory_and_is_marked_once_complete(self):
        line = self.save("first")
        self.assertEqual(line, 'RLS_CHECKPOINT {"path":"ckpt-000001"}\n')
        self.assertEqual(json.loads(line[len("RLS_CHECKPOINT "):]), {"path": "ckpt-000001"})
        self.save("second")
        latest = rls_checkpoint.latest()
        self.assertTrue(latest.endswith("ckpt-000002"))
        with open(os.path.join(latest, "state.txt")) as f:
            self.assertEqual(f.read(), "second")

    def test_older_local_directories_beyond_keep_are_deleted(self):
        for i in range(4):
            self.save("n%d" % i)
        self.assertEqual(sorted(n for n in os.listdir(self.dir) if not n.startswith(".")),
                         ["ckpt-000003", "ckpt-000004"])

    def test_a_failed_save_leaves_nothing_and_marks_nothing(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), self.assertRaises(RuntimeError):
            with rls_checkpoint.new() as d:
                open(os.path.join(d, "half"), "w").close()
                raise RuntimeError("disk full")
        self.assertEqual(out.getvalue(), "")
        self.assertEqual(os.listdir(self.dir), [])
        self.assertIsNone(rls_checkpoint.latest())

    def test_the_whole_directory_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rls_checkpoint.mark()
        self.assertEqual(out.getvalue(), "RLS_CHECKPOINT {}\n")


if __name__ == "__main__":
    unittest.main()
