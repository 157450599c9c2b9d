"""Tests of hf_reference.py. Those that run the model need the virtual
environment of scripts/install-peers.sh and bin/agentrl (to make a small
model); they are skipped otherwise:

    .venv-peers/bin/python -m unittest discover -s bench/peers -p 'test_hf_reference.py'
"""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "hf_reference.py")
AGENTRL = os.path.join(ROOT, "bin", "agentrl")
HAVE_PEERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "peft", "gguf"))


def run(args):
    p = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class JobErrors(unittest.TestCase):
    """Bad jobs fail before torch is imported: these need no packages."""

    def write_job(self, job):
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        self.addCleanup(os.unlink, f.name)
        json.dump(job, f)
        f.close()
        return f.name

    def test_job_without_work(self):
        code, out, err = run(["--model", "m.gguf", "--job", self.write_job({"train": {}})])
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertIn("logprobs, lora and/or generate", err)

    def test_missing_job_file(self):
        code, _, err = run(["--model", "m.gguf", "--job", "/nonexistent/job.json"])
        self.assertEqual(code, 2)
        self.assertIn("/nonexistent/job.json", err)


@unittest.skipUnless(HAVE_PEERS and os.access(AGENTRL, os.X_OK), "needs .venv-peers (scripts/install-peers.sh) and bin/agentrl")
class OnASmallModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.model = os.path.join(cls.dir.name, "tiny.gguf")
        subprocess.run([AGENTRL, "init-model", "--preset", "tiny", "--out", cls.model], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def run_job(self, job):
        path = os.path.join(self.dir.name, "job.json")
        with open(path, "w") as f:
            json.dump(job, f)
        code, out, err = run(["--model", self.model, "--threads", "1", "--job", path])
        return code, out, err

    def test_all_three_parts(self):
        seqs = [[1, 5, 9, 200, 7], [1, 42, 43]]
        batch = [[(7 * i + k) % 3000 for k in range(17)] for i in range(2)]
        code, out, err = self.run_job({
            "logprobs": {"sequences": seqs},
            "generate": {"prompt": [1, 5, 9], "new_tokens": 3, "sequences": [1, 2]},
            "lora": {"tokens": batch, "rank": 4, "alpha": 4, "steps": 3, "warmup": 1, "lr": 1e-2},
        })
        self.assertEqual(code, 0, err)
        rep = json.loads(out)
        lps = rep["logprobs"]["logprobs"]
        self.assertEqual([len(x) for x in lps], [4, 2])
        self.assertTrue(all(v < 0 for row in lps for v in row))
        gen = rep["generate"]["results"]
        self.assertEqual([g["sequences"] for g in gen], [1, 2])
        self.assertTrue(all(len(g["first_tokens"]) == 3 for g in gen))
        lora = rep["lora"]
        self.assertEqual(len(lora["losses"]), 3)
        self.assertEqual(lora["timed_steps"], 2)
        # A learning rate this high on one repeated batch lowers the loss.
        self.assertLess(lora["final_loss"], lora["losses"][0])
        self.assertEqual(rep["versions"]["peft"], __import__("peft").__version__)

    def test_token_outside_vocabulary(self):
        code, _, err = self.run_job({"logprobs": {"sequences": [[1, 10 ** 6]]}})
        self.assertEqual(code, 2)
        self.assertIn("outside the vocabulary", err)


if __name__ == "__main__":
    unittest.main()
