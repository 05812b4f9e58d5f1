package tinymodel

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// GGUF v3 layout, as ggml/include/gguf.h and ggml/docs/gguf.md define it:
// magic, version, tensor count, metadata count, metadata entries, tensor
// infos, padding to the alignment, then each tensor's data at an aligned
// offset. Everything is little-endian; strings are a uint64 length and bytes.
const (
	ggufMagic     = "GGUF"
	ggufVersion   = 3
	ggufAlignment = 32 // GGUF_DEFAULT_ALIGNMENT; we never write general.alignment
)

// Metadata value types (enum gguf_type). Only the ones the model needs.
const (
	ggufTypeUint32  uint32 = 4
	ggufTypeInt32   uint32 = 5
	ggufTypeFloat32 uint32 = 6
	ggufTypeBool    uint32 = 7
	ggufTypeString  uint32 = 8
	ggufTypeArray   uint32 = 9
)

// Tensor element types (enum ggml_type).
type ggmlType uint32

const (
	ggmlTypeF32 ggmlType = 0
	ggmlTypeF16 ggmlType = 1
)

// A metadata value is one of: uint32, int32, float32, bool, string,
// []int32, []string. Anything else is a programming error caught by write.
type metadata struct {
	key   string
	value any
}

// tensor dims are innermost first (ggml's ne[0] is the row length), which is
// the reverse of the row-major shape PyTorch would print.
type tensor struct {
	name string
	dims []uint64
	typ  ggmlType
	data []byte
}

type ggufFile struct {
	metadata []metadata
	tensors  []tensor
}

// write emits the file in slice order: callers control the order, which is
// what makes the bytes reproducible.
func (f *ggufFile) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	e := &encoder{w: bw}

	e.bytes([]byte(ggufMagic))
	e.u32(ggufVersion)
	e.u64(uint64(len(f.tensors)))
	e.u64(uint64(len(f.metadata)))
	for _, m := range f.metadata {
		e.str(m.key)
		if err := e.value(m.value); err != nil {
			return fmt.Errorf("gguf metadata %s: %w", m.key, err)
		}
	}

	var offset uint64
	for _, t := range f.tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(d)
		}
		e.u32(uint32(t.typ))
		e.u64(offset)
		offset = align(offset + uint64(len(t.data)))
	}

	e.pad()
	for _, t := range f.tensors {
		e.bytes(t.data)
		e.pad()
	}
	if e.err != nil {
		return e.err
	}
	return bw.Flush()
}

func align(n uint64) uint64 {
	return (n + ggufAlignment - 1) / ggufAlignment * ggufAlignment
}

// encoder keeps the first write error and the position, so the layout code
// above reads as the format does instead of as error handling.
type encoder struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *encoder) bytes(b []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(b)
	e.n += uint64(n)
	e.err = err
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.bytes(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.bytes(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	e.bytes([]byte(s))
}

func (e *encoder) pad() {
	var zeros [ggufAlignment]byte
	e.bytes(zeros[:align(e.n)-e.n])
}

func (e *encoder) value(v any) error {
	switch v := v.(type) {
	case uint32:
		e.u32(ggufTypeUint32)
		e.u32(v)
	case int32:
		e.u32(ggufTypeInt32)
		e.u32(uint32(v))
	case float32:
		e.u32(ggufTypeFloat32)
		e.u32(math.Float32bits(v))
	case bool:
		e.u32(ggufTypeBool)
		if v {
			e.bytes([]byte{1})
		} else {
			e.bytes([]byte{0})
		}
	case string:
		e.u32(ggufTypeString)
		e.str(v)
	case []int32:
		e.u32(ggufTypeArray)
		e.u32(ggufTypeInt32)
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(uint32(x))
		}
	case []string:
		e.u32(ggufTypeArray)
		e.u32(ggufTypeString)
		e.u64(uint64(len(v)))
		for _, s := range v {
			e.str(s)
		}
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}
