"""Tests of trl_grpo.py. The run on a model needs the virtual environment of
scripts/install-peers.sh (torch, transformers, peft, trl) and bin/agentrl
(to make a tiny model and the prompts); it is skipped otherwise. The rest
needs no packages:

    .venv-peers/bin/python -m unittest discover -s bench/peers -p 'test_trl_grpo.py'
    .venv-peers/bin/python -m pytest bench/peers/test_trl_grpo.py      # where pytest is installed
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
SCRIPT = os.path.join(HERE, "trl_grpo.py")
AGENTRL = os.path.join(ROOT, "bin", "agentrl")
HAVE_PEERS = all(importlib.util.find_spec(m) for m in ("torch", "transformers", "peft", "trl", "datasets", "gguf"))

_spec = importlib.util.spec_from_file_location("trl_grpo", SCRIPT)
trl_grpo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(trl_grpo)  # imports no torch: that happens in run()


def run(args):
    p = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


class Actions(unittest.TestCase):
    """The reward reads actions as agentrl's envs.ParseAction does."""

    def test_action_of(self):
        cases = {
            "Action: #### 21": "#### 21",
            "She sold 48 / 2 = 24 clips.\n#### 72\n\n": "#### 72",
            "Thought: easy.\nAction: answer[3]\nmore text": "answer[3]",
            "action:\n\n  #### 5": "#### 5",
            "A transaction: 4\n#### 9": "#### 9",  # "transaction:" is no marker
            "Action: first\nAction: `#### 8`": "#### 8",
            "": "",
        }
        for text, want in cases.items():
            self.assertEqual(trl_grpo.action_of(text), want, text)

    def test_reward(self):
        completions = [[{"role": "assistant", "content": c}] for c in ("x\n#### 21", "Action: #### 21 ", "#### 2", "21")]
        self.assertEqual(trl_grpo.action_reward(completions, ["#### 21"] * 4), [1.0, 1.0, 0.0, 0.0])

    def test_micro_batch(self):
        self.assertEqual(trl_grpo.micro_batch_size(32, 330, 4096), 8)
        self.assertEqual(trl_grpo.micro_batch_size(32, 5000, 4096), 1)
        self.assertEqual(trl_grpo.micro_batch_size(6, 10, 4096), 6)


class PromptErrors(unittest.TestCase):
    """Bad prompts fail before torch is imported: these need no packages."""

    def write(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
        self.addCleanup(os.unlink, f.name)
        f.write(text)
        f.close()
        return f.name

    def test_missing_file(self):
        code, out, err = run(["--model", "m.gguf", "--prompts", "/nonexistent/demos.jsonl"])
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertIn("/nonexistent/demos.jsonl", err)

    def test_not_demonstrations(self):
        code, _, err = run(["--model", "m.gguf", "--prompts", self.write('{"prompt": "x"}\n')])
        self.assertEqual(code, 2)
        self.assertIn("messages", err)

    def test_more_tasks_than_prompts(self):
        demo = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                             {"role": "assistant", "content": "Action: #### 1"}]}
        code, _, err = run(["--model", "m.gguf", "--prompts", self.write(json.dumps(demo) + "\n"), "--tasks", "3"])
        self.assertEqual(code, 2)
        self.assertIn("3 tasks", err)

    def test_reads_demonstrations(self):
        demo = {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                             {"role": "assistant", "content": "Action: #### 1"}]}
        rows = trl_grpo.read_prompts(self.write(json.dumps(demo) + "\n\n" + json.dumps(demo) + "\n"), 0)
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0]["answer"], "#### 1")
        self.assertEqual([m["role"] for m in rows[0]["prompt"]], ["system", "user"])
        # math's demonstrations are the worked solution: its last line.
        demo["messages"][2]["content"] = "1 - 0 = 1.\n#### 1"
        rows = trl_grpo.read_prompts(self.write(json.dumps(demo) + "\n"), 0)
        self.assertEqual(rows[0]["answer"], "#### 1")


@unittest.skipUnless(HAVE_PEERS and os.access(AGENTRL, os.X_OK), "needs .venv-peers (scripts/install-peers.sh) and bin/agentrl")
class OnATinyModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.model = os.path.join(cls.dir.name, "tiny.gguf")
        cls.prompts = os.path.join(cls.dir.name, "demos.jsonl")
        subprocess.run([AGENTRL, "init-model", "--preset", "tiny", "--out", cls.model], check=True, capture_output=True)
        subprocess.run([AGENTRL, "envs", "demos", "math", "--split", "train", "--episodes", "2", "--out", cls.prompts],
                       check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_one_step(self):
        code, out, err = run(["--model", self.model, "--prompts", self.prompts, "--group", "2", "--max-tokens", "4",
                              "--rank", "2", "--threads", "1", "--micro-batch", "2"])
        self.assertEqual(code, 0, err)
        rep = json.loads(out)
        self.assertEqual(rep["completions"], 4)
        self.assertEqual(rep["gradient_accumulation_steps"], 2)
        self.assertTrue(4 <= rep["generated_tokens"] <= 16)
        self.assertGreater(rep["train_tokens"], rep["generated_tokens"])
        self.assertLessEqual(rep["train_tokens"], rep["padded_train_tokens"])
        self.assertAlmostEqual(rep["seconds"], rep["generate_s"] + rep["train_s"], places=6)
        self.assertGreater(rep["train_s"], 0)
        self.assertLessEqual(rep["sampling_s"], rep["generate_s"])
        self.assertAlmostEqual(rep["generate_tok_s"], rep["generated_tokens"] / rep["generate_s"], places=3)
        self.assertEqual(rep["versions"]["trl"], __import__("trl").__version__)
        self.assertEqual(rep["settings"]["alpha"], 4.0)


if __name__ == "__main__":
    unittest.main()
