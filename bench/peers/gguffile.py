"""Minimal GGUF reader and writer: metadata and F32, F16, BF16 and Q8_0 tensors.

The layout follows ggml's gguf.h (version 2 and 3 files, little-endian):
magic "GGUF", version u32, tensor count i64, key/value count i64, the
key/value pairs, the tensor infos (name, dimensions in ggml's ne order,
type, offset), then the tensor data, aligned to general.alignment (32 by
default). ggml lists dimensions fastest-varying first, so a tensor with ne
[n_in, n_out] is a row-major numpy array of shape (n_out, n_in).

The writer exists for tests: it writes F32 and F16 tensors and metadata of
any type, so a model can be made with a different architecture or shape.
"""

import mmap
import struct

import numpy as np

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32

# gguf_type: the value types of metadata.
GGUF_UINT8, GGUF_INT8, GGUF_UINT16, GGUF_INT16 = 0, 1, 2, 3
GGUF_UINT32, GGUF_INT32, GGUF_FLOAT32, GGUF_BOOL = 4, 5, 6, 7
GGUF_STRING, GGUF_ARRAY, GGUF_UINT64, GGUF_INT64, GGUF_FLOAT64 = 8, 9, 10, 11, 12

_SCALAR_FORMATS = {
    GGUF_UINT8: "<B",
    GGUF_INT8: "<b",
    GGUF_UINT16: "<H",
    GGUF_INT16: "<h",
    GGUF_UINT32: "<I",
    GGUF_INT32: "<i",
    GGUF_FLOAT32: "<f",
    GGUF_BOOL: "<?",  # one byte
    GGUF_UINT64: "<Q",
    GGUF_INT64: "<q",
    GGUF_FLOAT64: "<d",
}

# ggml_type values of the tensor types this reader decodes.
GGML_F32 = 0
GGML_F16 = 1
GGML_Q8_0 = 8
GGML_BF16 = 30

TYPE_NAMES = {GGML_F32: "F32", GGML_F16: "F16", GGML_Q8_0: "Q8_0", GGML_BF16: "BF16"}

_Q8_0_BLOCK = 32
_Q8_0_BYTES = 2 + _Q8_0_BLOCK  # f16 scale, then 32 int8 values


class GGUFError(ValueError):
    """A file that is not a GGUF model this reader can decode."""


class Tensor:
    """One tensor's header: name, ggml ne dimensions, type and data offset."""

    def __init__(self, name, ne, ggml_type, offset):
        self.name = name
        self.ne = ne
        self.ggml_type = ggml_type
        self.offset = offset

    @property
    def shape(self):
        """The numpy (row-major) shape: ggml's ne reversed."""
        return tuple(reversed(self.ne))

    @property
    def n_elements(self):
        n = 1
        for d in self.ne:
            n *= d
        return n

    @property
    def type_name(self):
        return TYPE_NAMES.get(self.ggml_type, "ggml type %d" % self.ggml_type)


class GGUFFile:
    """A GGUF file opened read-only through mmap.

    metadata maps each key to its value (str, int, float, bool or list) and
    metadata_types to its (gguf_type, array element gguf_type or None);
    tensors maps each tensor name to its Tensor header; array(name) decodes
    a tensor into a float32 numpy array.
    """

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self._map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self._pos = 0
        try:
            self._parse()
        except (struct.error, UnicodeDecodeError) as e:
            raise GGUFError("%s: truncated or corrupt header: %s" % (path, e)) from e

    def close(self):
        self._map.close()

    def metadata_entries(self):
        """The metadata as write() takes it: (key, type, value, element type)."""
        return [(k, vt, self.metadata[k], et) for k, (vt, et) in self.metadata_types.items()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self, fmt):
        size = struct.calcsize(fmt)
        if self._pos + size > len(self._map):
            raise struct.error("read past the end of the file at byte %d" % self._pos)
        value = struct.unpack_from(fmt, self._map, self._pos)[0]
        self._pos += size
        return value

    def _string(self):
        n = self._read("<Q")
        if self._pos + n > len(self._map):
            raise struct.error("string of %d bytes past the end of the file" % n)
        s = bytes(self._map[self._pos:self._pos + n]).decode("utf-8")
        self._pos += n
        return s

    def _value(self, vtype):
        if vtype == GGUF_STRING:
            return self._string()
        if vtype == GGUF_ARRAY:
            etype = self._read("<I")
            n = self._read("<Q")
            if etype in _SCALAR_FORMATS and etype != GGUF_BOOL:
                # Numeric arrays (token scores, types) can be long: read them
                # in one go.
                dtype = np.dtype(_SCALAR_FORMATS[etype])
                size = dtype.itemsize * n
                if self._pos + size > len(self._map):
                    raise struct.error("array of %d bytes past the end of the file" % size)
                arr = np.frombuffer(self._map, dtype=dtype, count=n, offset=self._pos)
                self._pos += size
                return arr.tolist()
            return [self._value(etype) for _ in range(n)]
        if vtype not in _SCALAR_FORMATS:
            raise GGUFError("%s: unknown metadata value type %d" % (self.path, vtype))
        return self._read(_SCALAR_FORMATS[vtype])

    def _parse(self):
        if bytes(self._map[:4]) != MAGIC:
            raise GGUFError("%s: not a GGUF file (magic %r)" % (self.path, bytes(self._map[:4])))
        self._pos = 4
        self.version = self._read("<I")
        if self.version not in (2, 3):
            raise GGUFError("%s: GGUF version %d not supported (want 2 or 3)" % (self.path, self.version))
        n_tensors = self._read("<q")
        n_kv = self._read("<q")
        if n_tensors < 0 or n_kv < 0:
            raise GGUFError("%s: negative tensor or key count" % self.path)

        self.metadata = {}
        self.metadata_types = {}
        for _ in range(n_kv):
            key = self._string()
            vtype = self._read("<I")
            etype = None
            if vtype == GGUF_ARRAY:
                etype = struct.unpack_from("<I", self._map, self._pos)[0]
            self.metadata[key] = self._value(vtype)
            self.metadata_types[key] = (vtype, etype)

        self.tensors = {}
        for _ in range(n_tensors):
            name = self._string()
            n_dims = self._read("<I")
            if n_dims > 4:
                raise GGUFError("%s: tensor %s has %d dimensions" % (self.path, name, n_dims))
            ne = [self._read("<q") for _ in range(n_dims)]
            ggml_type = self._read("<i")
            offset = self._read("<Q")
            self.tensors[name] = Tensor(name, ne, ggml_type, offset)

        alignment = self.metadata.get("general.alignment", DEFAULT_ALIGNMENT)
        self.data_offset = (self._pos + alignment - 1) // alignment * alignment

    def array(self, name):
        """Tensor name decoded to a float32 numpy array of its row-major shape."""
        if name not in self.tensors:
            raise GGUFError("%s: no tensor %s" % (self.path, name))
        t = self.tensors[name]
        n = t.n_elements
        start = self.data_offset + t.offset
        if t.ggml_type == GGML_F32:
            raw, size = np.dtype("<f4"), 4 * n
        elif t.ggml_type in (GGML_F16, GGML_BF16):
            raw, size = np.dtype("<u2"), 2 * n
        elif t.ggml_type == GGML_Q8_0:
            if t.ne[0] % _Q8_0_BLOCK:
                raise GGUFError("%s: Q8_0 tensor %s has rows of %d, not a multiple of %d" % (self.path, name, t.ne[0], _Q8_0_BLOCK))
            raw, size = np.dtype("u1"), n // _Q8_0_BLOCK * _Q8_0_BYTES
        else:
            raise GGUFError("%s: tensor %s has type %s; this reader decodes F32, F16, BF16 and Q8_0" % (self.path, name, t.type_name))
        if start + size > len(self._map):
            raise GGUFError("%s: tensor %s runs past the end of the file" % (self.path, name))
        data = np.frombuffer(self._map, dtype=raw, count=size // raw.itemsize, offset=start)

        if t.ggml_type == GGML_F32:
            out = data.copy()
        elif t.ggml_type == GGML_F16:
            out = data.view("<f2").astype(np.float32)
        elif t.ggml_type == GGML_BF16:
            # bfloat16 is the upper half of a float32.
            out = (data.astype(np.uint32) << 16).view(np.float32)
        else:
            blocks = data.reshape(-1, _Q8_0_BYTES)
            scale = blocks[:, :2].copy().view("<f2").astype(np.float32)
            quants = blocks[:, 2:].copy().view(np.int8).astype(np.float32)
            out = (quants * scale).reshape(-1)
        return out.reshape(t.shape)


def _pack_value(vtype, value, etype=None):
    if vtype == GGUF_STRING:
        b = value.encode("utf-8")
        return struct.pack("<Q", len(b)) + b
    if vtype == GGUF_ARRAY:
        return struct.pack("<IQ", etype, len(value)) + b"".join(_pack_value(etype, v) for v in value)
    return struct.pack(_SCALAR_FORMATS[vtype], value)


def write(path, metadata, tensors, alignment=DEFAULT_ALIGNMENT):
    """Writes a GGUF version 3 file.

    metadata is a list of (key, gguf_type, value, array element gguf_type or
    None); tensors a list of (name, numpy array): float16 arrays are stored
    as F16, everything else as F32, in the array's row-major layout.
    """
    header = [MAGIC, struct.pack("<Iqq", 3, len(tensors), len(metadata))]
    for key, vtype, value, etype in metadata:
        header += [_pack_value(GGUF_STRING, key), struct.pack("<I", vtype), _pack_value(vtype, value, etype)]
    blobs, offset = [], 0
    for name, arr in tensors:
        if arr.dtype == np.float16:
            ggml_type, data = GGML_F16, np.ascontiguousarray(arr, dtype="<f2").tobytes()
        else:
            ggml_type, data = GGML_F32, np.ascontiguousarray(arr, dtype="<f4").tobytes()
        ne = list(reversed(arr.shape))
        header += [_pack_value(GGUF_STRING, name), struct.pack("<I", len(ne)), struct.pack("<%dq" % len(ne), *ne), struct.pack("<iQ", ggml_type, offset)]
        pad = -len(data) % alignment
        blobs.append(data + b"\0" * pad)
        offset += len(data) + pad
    head = b"".join(header)
    head += b"\0" * (-len(head) % alignment)
    with open(path, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)
