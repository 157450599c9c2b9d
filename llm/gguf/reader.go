package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Errors returned by Read and Open; they are wrapped with details, so test
// them with errors.Is.
var (
	ErrNotGGUF   = errors.New("not a GGUF file")
	ErrTruncated = errors.New("truncated GGUF")
	ErrInvalid   = errors.New("invalid GGUF")
	ErrNoKey     = errors.New("metadata key not found")
	ErrNoTensor  = errors.New("tensor not found")
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the format version this package writes; Read also accepts
// version 2, which has the same layout.
const Version = 3

// maxKeyLen bounds metadata keys; the format specification caps them at
// 65535 bytes.
const maxKeyLen = 65535

// KV is one metadata key/value pair. Value holds one of the Go types that
// map to GGUF types: uint8, int8, uint16, int16, uint32, int32, float32, bool,
// string, uint64, int64, float64, or a slice of one of these.
type KV struct {
	Key   string
	Value any
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name string
	// Shape lists the dimensions in ggml order: Shape[0] is the length of
	// a row, the fastest-varying dimension.
	Shape []int64
	Type  TensorType
	// Offset is the position of the tensor data relative to the start of
	// the data section.
	Offset int64
	// Size is the size of the tensor data in bytes.
	Size int64
}

// Elements is the number of elements of the tensor.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is the parsed header of a GGUF file: metadata and tensor
// descriptions, validated so that ggml will accept them. Tensor data stays on
// disk until TensorData is called.
type File struct {
	Version  uint32
	Metadata []KV
	Tensors  []TensorInfo
	// Alignment of each tensor's data, from general.alignment.
	Alignment int64
	// DataOffset is where the tensor data section starts in the file.
	DataOffset int64
	// Size is the size of the file in bytes.
	Size int64

	keys    map[string]int
	tensors map[string]int
	r       io.ReaderAt
	closer  io.Closer
}

// Open reads and validates the header of the GGUF file at path. The file
// stays open for TensorData until Close.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := Read(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = fh
	return f, nil
}

// Close releases the file opened by Open. It does nothing for a File made
// by Read.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	f.r = nil
	return err
}

// Read parses and validates a GGUF file of the given size from r. It reads
// the header only; r must stay readable for TensorData. It never allocates
// more than a small multiple of size, whatever the bytes say.
func Read(r io.ReaderAt, size int64) (*File, error) {
	d := &decoder{r: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 1<<16), size: size}
	f := &File{Size: size, r: r, keys: map[string]int{}, tensors: map[string]int{}}

	magic, err := d.bytes(4, "magic")
	if err != nil {
		if size < 4 {
			return nil, fmt.Errorf("%w (file is %d bytes long)", ErrNotGGUF, size)
		}
		return nil, err
	}
	if string(magic) != Magic {
		return nil, fmt.Errorf("%w (magic %q, want %q)", ErrNotGGUF, magic, Magic)
	}
	if f.Version, err = d.u32("version"); err != nil {
		return nil, err
	}
	switch {
	case f.Version == 2 || f.Version == 3:
	case f.Version&0xFFFF == 0:
		return nil, fmt.Errorf("%w: version %#x looks byte-swapped; big-endian files are not supported", ErrInvalid, f.Version)
	default:
		return nil, fmt.Errorf("%w: unsupported version %d (want 2 or 3)", ErrInvalid, f.Version)
	}
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// Each metadata pair takes at least 13 bytes (key length, type, one
	// byte of value) and each tensor description at least 24, which bounds
	// the counts by what the file can hold.
	if nKV > uint64(d.remaining()/13) {
		return nil, fmt.Errorf("%w: %d metadata pairs cannot fit in %d bytes", ErrTruncated, nKV, size)
	}
	if nTensors > uint64(d.remaining()/24) {
		return nil, fmt.Errorf("%w: %d tensors cannot fit in %d bytes", ErrTruncated, nTensors, size)
	}

	f.Metadata = make([]KV, 0, nKV)
	for i := range nKV {
		kv, err := d.kv()
		if err != nil {
			return nil, fmt.Errorf("metadata pair %d: %w", i, err)
		}
		if _, dup := f.keys[kv.Key]; dup {
			return nil, fmt.Errorf("%w: duplicate metadata key %q", ErrInvalid, kv.Key)
		}
		f.keys[kv.Key] = len(f.Metadata)
		f.Metadata = append(f.Metadata, kv)
	}

	f.Alignment = DefaultAlignment
	if v, ok := f.Lookup(KeyAlignment); ok {
		a, isU32 := v.(uint32)
		// ggml reads the alignment as a u32 and aborts on any other type.
		if !isU32 {
			return nil, fmt.Errorf("%w: %s has type %s, want u32", ErrInvalid, KeyAlignment, typeName(v))
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, fmt.Errorf("%w: %s = %d is not a power of two", ErrInvalid, KeyAlignment, a)
		}
		f.Alignment = int64(a)
	}

	f.Tensors = make([]TensorInfo, 0, nTensors)
	for i := range nTensors {
		t, err := d.tensorInfo()
		if err != nil {
			return nil, fmt.Errorf("tensor %d: %w", i, err)
		}
		if _, dup := f.tensors[t.Name]; dup {
			return nil, fmt.Errorf("%w: duplicate tensor name %q", ErrInvalid, t.Name)
		}
		f.tensors[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}

	f.DataOffset = padTo(d.pos, f.Alignment)
	// ggml lays the tensors out back to back, each padded to the
	// alignment, and rejects any other offset.
	var expected int64
	for _, t := range f.Tensors {
		if t.Offset != expected {
			return nil, fmt.Errorf("%w: tensor %q has data offset %d, want %d", ErrInvalid, t.Name, t.Offset, expected)
		}
		end := f.DataOffset + t.Offset + t.Size
		if end < 0 || end > size {
			return nil, fmt.Errorf("%w: data of tensor %q ends at byte %d, file has %d", ErrTruncated, t.Name, end, size)
		}
		expected += padTo(t.Size, f.Alignment)
	}
	return f, nil
}

// decoder reads little-endian GGUF fields, tracking the position so that
// every length can be checked against the bytes left before allocating.
type decoder struct {
	r    *bufio.Reader
	pos  int64
	size int64
	buf  [8]byte
}

func (d *decoder) remaining() int64 { return d.size - d.pos }

func (d *decoder) truncated(what string) error {
	return fmt.Errorf("%w: %s at offset %d runs past the end of the file (%d bytes)", ErrTruncated, what, d.pos, d.size)
}

func (d *decoder) fixed(n int, what string) ([]byte, error) {
	if int64(n) > d.remaining() {
		return nil, d.truncated(what)
	}
	if _, err := io.ReadFull(d.r, d.buf[:n]); err != nil {
		return nil, fmt.Errorf("read %s at offset %d: %w", what, d.pos, err)
	}
	d.pos += int64(n)
	return d.buf[:n], nil
}

func (d *decoder) bytes(n int64, what string) ([]byte, error) {
	if n < 0 || n > d.remaining() {
		return nil, d.truncated(what)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		return nil, fmt.Errorf("read %s at offset %d: %w", what, d.pos, err)
	}
	d.pos += n
	return b, nil
}

func (d *decoder) u8(what string) (uint8, error) {
	b, err := d.fixed(1, what)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (d *decoder) u16(what string) (uint16, error) {
	b, err := d.fixed(2, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.fixed(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.fixed(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (d *decoder) str(what string) (string, error) {
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > uint64(d.remaining()) {
		return "", fmt.Errorf("%w: %s of %d bytes at offset %d runs past the end of the file (%d bytes)", ErrTruncated, what, n, d.pos, d.size)
	}
	b, err := d.bytes(int64(n), what)
	return string(b), err
}

func (d *decoder) kv() (KV, error) {
	key, err := d.str("key")
	if err != nil {
		return KV{}, err
	}
	// ggml asserts that keys are not empty.
	if key == "" {
		return KV{}, fmt.Errorf("%w: empty metadata key", ErrInvalid)
	}
	if len(key) > maxKeyLen {
		return KV{}, fmt.Errorf("%w: metadata key of %d bytes (at most %d)", ErrInvalid, len(key), maxKeyLen)
	}
	typ, err := d.u32("type of " + key)
	if err != nil {
		return KV{}, err
	}
	var v any
	if ValueType(typ) == TypeArray {
		v, err = d.array(key)
	} else {
		v, err = d.scalar(ValueType(typ), key)
	}
	if err != nil {
		return KV{}, err
	}
	return KV{Key: key, Value: v}, nil
}

func (d *decoder) scalar(typ ValueType, key string) (any, error) {
	what := "value of " + key
	switch typ {
	case TypeUint8:
		return d.u8(what)
	case TypeInt8:
		v, err := d.u8(what)
		return int8(v), err
	case TypeBool:
		v, err := d.u8(what)
		return v != 0, err
	case TypeUint16:
		return d.u16(what)
	case TypeInt16:
		v, err := d.u16(what)
		return int16(v), err
	case TypeUint32:
		return d.u32(what)
	case TypeInt32:
		v, err := d.u32(what)
		return int32(v), err
	case TypeFloat32:
		v, err := d.u32(what)
		return math.Float32frombits(v), err
	case TypeUint64:
		return d.u64(what)
	case TypeInt64:
		v, err := d.u64(what)
		return int64(v), err
	case TypeFloat64:
		v, err := d.u64(what)
		return math.Float64frombits(v), err
	case TypeString:
		return d.str(what)
	}
	return nil, fmt.Errorf("%w: key %q has unknown value type %d", ErrInvalid, key, uint32(typ))
}

func (d *decoder) array(key string) (any, error) {
	et, err := d.u32("array type of " + key)
	if err != nil {
		return nil, err
	}
	elem := ValueType(et)
	n, err := d.u64("array length of " + key)
	if err != nil {
		return nil, err
	}
	minSize := elem.fixedSize()
	switch {
	case elem == TypeString:
		minSize = 8
	case elem == TypeArray:
		return nil, fmt.Errorf("%w: key %q is an array of arrays", ErrInvalid, key)
	case minSize == 0:
		return nil, fmt.Errorf("%w: key %q has unknown array element type %d", ErrInvalid, key, et)
	}
	if n > uint64(d.remaining()/int64(minSize)) {
		return nil, fmt.Errorf("%w: array %q of %d %s at offset %d runs past the end of the file (%d bytes)", ErrTruncated, key, n, elem, d.pos, d.size)
	}
	if elem == TypeString {
		out := make([]string, n)
		for i := range out {
			if out[i], err = d.str(fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	raw, err := d.bytes(int64(n)*int64(minSize), "array "+key)
	if err != nil {
		return nil, err
	}
	return decodeArray(elem, raw), nil
}

// decodeArray turns the little-endian bytes of a fixed-size array into the
// matching Go slice.
func decodeArray(elem ValueType, raw []byte) any {
	le := binary.LittleEndian
	switch elem {
	case TypeUint8:
		return raw
	case TypeInt8:
		out := make([]int8, len(raw))
		for i, b := range raw {
			out[i] = int8(b)
		}
		return out
	case TypeBool:
		out := make([]bool, len(raw))
		for i, b := range raw {
			out[i] = b != 0
		}
		return out
	case TypeUint16:
		out := make([]uint16, len(raw)/2)
		for i := range out {
			out[i] = le.Uint16(raw[2*i:])
		}
		return out
	case TypeInt16:
		out := make([]int16, len(raw)/2)
		for i := range out {
			out[i] = int16(le.Uint16(raw[2*i:]))
		}
		return out
	case TypeUint32:
		out := make([]uint32, len(raw)/4)
		for i := range out {
			out[i] = le.Uint32(raw[4*i:])
		}
		return out
	case TypeInt32:
		out := make([]int32, len(raw)/4)
		for i := range out {
			out[i] = int32(le.Uint32(raw[4*i:]))
		}
		return out
	case TypeFloat32:
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return out
	case TypeUint64:
		out := make([]uint64, len(raw)/8)
		for i := range out {
			out[i] = le.Uint64(raw[8*i:])
		}
		return out
	case TypeInt64:
		out := make([]int64, len(raw)/8)
		for i := range out {
			out[i] = int64(le.Uint64(raw[8*i:]))
		}
		return out
	default: // TypeFloat64, the last fixed-size type
		out := make([]float64, len(raw)/8)
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return out
	}
}

func (d *decoder) tensorInfo() (TensorInfo, error) {
	name, err := d.str("tensor name")
	if err != nil {
		return TensorInfo{}, err
	}
	if name == "" {
		return TensorInfo{}, fmt.Errorf("%w: empty tensor name", ErrInvalid)
	}
	if len(name) > MaxTensorName {
		return TensorInfo{}, fmt.Errorf("%w: tensor name %q is %d bytes long (at most %d)", ErrInvalid, name, len(name), MaxTensorName)
	}
	nDims, err := d.u32("dimension count of " + name)
	if err != nil {
		return TensorInfo{}, err
	}
	if nDims > MaxDims {
		return TensorInfo{}, fmt.Errorf("%w: tensor %q has %d dimensions (at most %d)", ErrInvalid, name, nDims, MaxDims)
	}
	shape := make([]int64, nDims)
	for i := range shape {
		v, err := d.u64("shape of " + name)
		if err != nil {
			return TensorInfo{}, err
		}
		shape[i] = int64(v)
	}
	typ, err := d.u32("type of " + name)
	if err != nil {
		return TensorInfo{}, err
	}
	offset, err := d.u64("data offset of " + name)
	if err != nil {
		return TensorInfo{}, err
	}
	if offset > math.MaxInt64 {
		return TensorInfo{}, fmt.Errorf("%w: tensor %q has data offset %d", ErrInvalid, name, offset)
	}
	size, err := tensorBytes(TensorType(typ), shape)
	if err != nil {
		return TensorInfo{}, fmt.Errorf("%w: tensor %q: %v", ErrInvalid, name, err)
	}
	return TensorInfo{Name: name, Shape: shape, Type: TensorType(typ), Offset: int64(offset), Size: size}, nil
}

// Lookup returns the value of a metadata key.
func (f *File) Lookup(key string) (any, bool) {
	i, ok := f.keys[key]
	if !ok {
		return nil, false
	}
	return f.Metadata[i].Value, true
}

// get returns the value of key as a T, or an error naming the key and the
// types when it is missing or of another type.
func get[T any](f *File, key string) (T, error) {
	var zero T
	v, ok := f.Lookup(key)
	if !ok {
		return zero, fmt.Errorf("%w: %s", ErrNoKey, key)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("metadata key %s has type %s, want %s", key, typeName(v), typeName(zero))
	}
	return t, nil
}

// GetString returns a string metadata value.
func (f *File) GetString(key string) (string, error) { return get[string](f, key) }

// GetUint32 returns a u32 metadata value.
func (f *File) GetUint32(key string) (uint32, error) { return get[uint32](f, key) }

// GetFloat32 returns an f32 metadata value.
func (f *File) GetFloat32(key string) (float32, error) { return get[float32](f, key) }

// GetBool returns a bool metadata value.
func (f *File) GetBool(key string) (bool, error) { return get[bool](f, key) }

// GetStrings returns a string-array metadata value.
func (f *File) GetStrings(key string) ([]string, error) { return get[[]string](f, key) }

// GetInt32s returns an i32-array metadata value.
func (f *File) GetInt32s(key string) ([]int32, error) { return get[[]int32](f, key) }

// Architecture returns general.architecture, e.g. "llama", or "" when the
// key is missing or not a string.
func (f *File) Architecture() string {
	arch, _ := f.GetString("general.architecture")
	return arch
}

// Tensor returns the description of the named tensor.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tensors[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorData reads the raw bytes of the named tensor.
func (f *File) TensorData(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoTensor, name)
	}
	if f.r == nil {
		return nil, fmt.Errorf("read tensor %s: file is closed", name)
	}
	b := make([]byte, t.Size)
	if _, err := f.r.ReadAt(b, f.DataOffset+t.Offset); err != nil {
		return nil, fmt.Errorf("read tensor %s: %w", name, err)
	}
	return b, nil
}

// TensorFloat32 reads the named tensor and converts it to float32. It
// supports the types DecodeFloat32 does.
func (f *File) TensorFloat32(name string) ([]float32, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoTensor, name)
	}
	raw, err := f.TensorData(name)
	if err != nil {
		return nil, err
	}
	out, err := DecodeFloat32(t.Type, raw)
	if err != nil {
		return nil, fmt.Errorf("tensor %s: %w", name, err)
	}
	return out, nil
}
