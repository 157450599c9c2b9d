"""Tests of gguffile: metadata and tensors survive a write and read, and the
BF16 and Q8_0 decoders match hand-computed values.

    /usr/bin/python3 -m unittest discover -s bench/peers -p 'test_*.py'
"""

import os
import struct
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gguffile  # noqa: E402


def raw_gguf(tensors, data):
    """A GGUF file with no metadata and tensors given as (name, ne, ggml type,
    offset), followed by the data blob."""
    head = gguffile.MAGIC + struct.pack("<Iqq", 3, len(tensors), 0)
    for name, ne, ggml_type, offset in tensors:
        b = name.encode()
        head += struct.pack("<Q", len(b)) + b + struct.pack("<I", len(ne)) + struct.pack("<%dq" % len(ne), *ne) + struct.pack("<iQ", ggml_type, offset)
    head += b"\0" * (-len(head) % gguffile.DEFAULT_ALIGNMENT)
    return head + data


class GGUFFileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.dir.name, "m.gguf")

    def tearDown(self):
        self.dir.cleanup()

    def test_round_trip(self):
        metadata = [
            ("general.architecture", gguffile.GGUF_STRING, "llama", None),
            ("a.u8", gguffile.GGUF_UINT8, 200, None),
            ("a.i16", gguffile.GGUF_INT16, -3, None),
            ("a.u32", gguffile.GGUF_UINT32, 4000000000, None),
            ("a.i64", gguffile.GGUF_INT64, -(1 << 40), None),
            ("a.f32", gguffile.GGUF_FLOAT32, 0.5, None),
            ("a.f64", gguffile.GGUF_FLOAT64, 1e-300, None),
            ("a.bool", gguffile.GGUF_BOOL, True, None),
            ("a.strings", gguffile.GGUF_ARRAY, ["x", "ü", ""], gguffile.GGUF_STRING),
            ("a.ints", gguffile.GGUF_ARRAY, [1, -2, 3], gguffile.GGUF_INT32),
            ("a.bools", gguffile.GGUF_ARRAY, [True, False], gguffile.GGUF_BOOL),
        ]
        rng = np.random.default_rng(0)
        w32 = rng.normal(size=(3, 5)).astype(np.float32)
        w16 = rng.normal(size=(7, 4)).astype(np.float16)
        v = rng.normal(size=11).astype(np.float32)
        gguffile.write(self.path, metadata, [("w32", w32), ("w16", w16), ("v", v)])
        with gguffile.GGUFFile(self.path) as g:
            self.assertEqual(g.version, 3)
            for key, vtype, value, etype in metadata:
                self.assertEqual(g.metadata[key], value, key)
                self.assertEqual(g.metadata_types[key], (vtype, etype), key)
            self.assertEqual(g.metadata_entries(), metadata)
            # ggml's ne order is the numpy shape reversed.
            self.assertEqual(g.tensors["w32"].ne, [5, 3])
            self.assertEqual(g.tensors["w16"].type_name, "F16")
            np.testing.assert_array_equal(g.array("w32"), w32)
            np.testing.assert_array_equal(g.array("w16"), w16.astype(np.float32))
            np.testing.assert_array_equal(g.array("v"), v)
            self.assertEqual(g.array("w16").dtype, np.float32)

    def test_bf16(self):
        values = np.array([1.0, -2.5, 3.140625, 0.0], dtype=np.float32)
        upper = (values.view(np.uint32) >> 16).astype("<u2")
        with open(self.path, "wb") as f:
            f.write(raw_gguf([("b", [2, 2], gguffile.GGML_BF16, 0)], upper.tobytes()))
        with gguffile.GGUFFile(self.path) as g:
            np.testing.assert_array_equal(g.array("b"), values.reshape(2, 2))

    def test_q8_0(self):
        # Two blocks of 32: value = scale * int8.
        quants = np.arange(-32, 32, dtype=np.int8)
        scales = np.array([0.5, -0.25], dtype="<f2")
        blob = b"".join(scales[i:i + 1].tobytes() + quants[32 * i:32 * i + 32].tobytes() for i in range(2))
        with open(self.path, "wb") as f:
            f.write(raw_gguf([("q", [32, 2], gguffile.GGML_Q8_0, 0)], blob))
        with gguffile.GGUFFile(self.path) as g:
            want = np.concatenate([quants[:32] * 0.5, quants[32:] * -0.25]).reshape(2, 32)
            np.testing.assert_array_equal(g.array("q"), want.astype(np.float32))

    def test_errors(self):
        with open(self.path, "wb") as f:
            f.write(b"GGML" + b"\0" * 40)
        with self.assertRaisesRegex(gguffile.GGUFError, "not a GGUF file"):
            gguffile.GGUFFile(self.path)

        gguffile.write(self.path, [("k", gguffile.GGUF_STRING, "v" * 100, None)], [("t", np.zeros(64, np.float32))])
        with open(self.path, "rb") as f:
            data = f.read()
        with open(self.path, "wb") as f:
            f.write(data[:60])
        with self.assertRaisesRegex(gguffile.GGUFError, "truncated"):
            gguffile.GGUFFile(self.path)
        with open(self.path, "wb") as f:
            f.write(data[:-8])
        with gguffile.GGUFFile(self.path) as g:
            with self.assertRaisesRegex(gguffile.GGUFError, "past the end"):
                g.array("t")
            with self.assertRaisesRegex(gguffile.GGUFError, "no tensor"):
                g.array("missing")

        with open(self.path, "wb") as f:
            f.write(raw_gguf([("q4", [32], 2, 0)], b"\0" * 32))
        with gguffile.GGUFFile(self.path) as g:
            with self.assertRaisesRegex(gguffile.GGUFError, "decodes F32, F16, BF16 and Q8_0"):
                g.array("q4")


if __name__ == "__main__":
    unittest.main()
