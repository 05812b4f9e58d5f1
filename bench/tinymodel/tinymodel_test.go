package tinymodel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	fsggml "github.com/ollama/ollama/fs/ggml"
)

// goldenSHA256 pins Write's output for seed 1 and default options. If a
// change to the generator moves it on purpose, update it and bump Version so
// that cached models are regenerated.
const goldenSHA256 = "345ebf68abf086a18645b2785ff49f027dce7b7d6a53906b62154fcd9093e4c6"

func testVocab(t *testing.T) *Vocab {
	t.Helper()
	dir, err := OllamaTokenizerDir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadVocab(dir)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func write(t *testing.T, v *Vocab, o Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, v, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWrite_GoldenChecksum(t *testing.T) {
	sum := sha256.Sum256(write(t, testVocab(t), Options{Seed: 1}))
	if got := hex.EncodeToString(sum[:]); got != goldenSHA256 {
		t.Errorf("sha256 of the seed 1 model = %s, want %s (if intended, update goldenSHA256 and bump Version)", got, goldenSHA256)
	}
}

func TestWrite_SameSeedSameBytes(t *testing.T) {
	v := testVocab(t)
	a := write(t, v, Options{Seed: 7})
	b := write(t, testVocab(t), Options{Seed: 7})
	if !bytes.Equal(a, b) {
		t.Fatal("two writes with seed 7 differ")
	}
	if bytes.Equal(a, write(t, v, Options{Seed: 8})) {
		t.Fatal("seeds 7 and 8 wrote the same bytes")
	}
}

func TestWrite_DefaultModelFitsSizeBudget(t *testing.T) {
	if n := len(write(t, testVocab(t), Options{})); n > 64<<20 {
		t.Errorf("default model is %d bytes, over the 64 MiB budget", n)
	}
}

func TestWrite_RejectsInvalidShapes(t *testing.T) {
	v := testVocab(t)
	for _, o := range []Options{
		{HeadDim: 7},           // RoPE needs an even head width
		{Heads: 4, KVHeads: 3}, // 3 does not divide 4
		{Layers: -1},
	} {
		if err := Write(&bytes.Buffer{}, v, o); err == nil {
			t.Errorf("Write(%+v) succeeded, want an error", o)
		}
	}
}

// Ollama's own GGUF reader is an independent check of the layout: if it
// finds our keys, shapes and tensor bytes where we meant them, llama.cpp's
// reader (same format, same spec) does too.
func TestWrite_OllamaReadsModel(t *testing.T) {
	v := testVocab(t)
	o := Options{Seed: 3}
	data := write(t, v, o)

	f, err := fsggml.Decode(bytes.NewReader(data), -1)
	if err != nil {
		t.Fatalf("ollama fs/ggml cannot decode the file: %v", err)
	}
	kv := f.KV()
	if got := kv.Architecture(); got != "llama" {
		t.Errorf("architecture = %q, want llama", got)
	}
	if got := kv.ContextLength(); got < 131072 {
		t.Errorf("context length = %d, want at least 131072", got)
	}
	if got, want := kv.String("tokenizer.ggml.model"), "gpt2"; got != want {
		t.Errorf("tokenizer model = %q, want %q", got, want)
	}
	tokens := kv.Strings("tokenizer.ggml.tokens")
	types := kv.Ints("tokenizer.ggml.token_type")
	if len(tokens) != len(v.Tokens) || len(types) != len(v.Tokens) {
		t.Fatalf("%d tokens and %d token types, want %d of each", len(tokens), len(types), len(v.Tokens))
	}
	if got := len(kv.Strings("tokenizer.ggml.merges")); got != len(v.Merges) || got < 100000 {
		t.Errorf("%d merges, want %d (a real BPE)", got, len(v.Merges))
	}
	eos := kv.Uint("tokenizer.ggml.eos_token_id")
	if tokens[eos] != TokenIMEnd || types[eos] != tokenTypeControl {
		t.Errorf("eos is %q of type %d, want %q, a control token", tokens[eos], types[eos], TokenIMEnd)
	}
	if kv.Bool("tokenizer.ggml.add_bos_token", true) {
		t.Error("add_bos_token is true; ChatML prompts carry no BOS")
	}
	if kv.String("tokenizer.chat_template") != ChatTemplate {
		t.Error("tokenizer.chat_template differs from ChatTemplate")
	}

	want := modelTensors(len(v.Tokens), o.withDefaults())
	got := f.Tensors().Items()
	if len(got) != len(want) {
		t.Fatalf("%d tensors, want %d", len(got), len(want))
	}
	base := f.Tensors().Offset
	if base%ggufAlignment != 0 {
		t.Errorf("tensor data starts at %d, not a multiple of %d", base, ggufAlignment)
	}
	for i, w := range want {
		g := got[i]
		if diff := cmp.Diff(w.dims, g.Shape); g.Name != w.name || diff != "" || g.Kind != uint32(w.typ) {
			t.Errorf("tensor %d = %s kind %d shape %v, want %s kind %d (-want +got shape):\n%s", i, g.Name, g.Kind, g.Shape, w.name, w.typ, diff)
			continue
		}
		start := base + g.Offset
		if g.Offset%ggufAlignment != 0 || !bytes.Equal(data[start:start+uint64(len(w.data))], w.data) {
			t.Errorf("tensor %s: data not found at aligned offset %d", g.Name, g.Offset)
		}
	}
}

func TestLoadVocab_ChatTokensAreAppendedWithTypes(t *testing.T) {
	v := testVocab(t)
	for _, tc := range []struct {
		text string
		typ  int32
	}{
		{TokenEndOfText, tokenTypeControl},
		{TokenIMStart, tokenTypeControl},
		{TokenIMEnd, tokenTypeControl},
		{TokenToolCall, tokenTypeUserDefined},
		{TokenToolCallEnd, tokenTypeUserDefined},
		{TokenTools, tokenTypeUserDefined},
		{TokenToolsEnd, tokenTypeUserDefined},
		{TokenToolResponse, tokenTypeUserDefined},
		{TokenToolResponseE, tokenTypeUserDefined},
	} {
		id, ok := v.ID(tc.text)
		if !ok {
			t.Errorf("%q missing", tc.text)
			continue
		}
		if id < 128000 || v.Types[id] != tc.typ {
			t.Errorf("%q is id %d of type %d, want an id after the BPE's 128000 and type %d", tc.text, id, v.Types[id], tc.typ)
		}
	}
	if v.Tokens[v.IMEnd] != TokenIMEnd || v.Tokens[v.EndOfText] != TokenEndOfText {
		t.Error("IMEnd or EndOfText ids point at the wrong tokens")
	}
	// Byte-level BPE spells a space as "Ġ"; a sample of the real vocabulary.
	if id, ok := v.ID("Ġthe"); !ok || v.Types[id] != tokenTypeNormal {
		t.Error(`"Ġthe" missing or not a normal token: not the Llama 3 BPE?`)
	}
}

func TestFloat16_RoundTripsEveryHalf(t *testing.T) {
	for h := range 1 << 16 {
		h := uint16(h)
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue // NaN payloads are not preserved, only NaN-ness
		}
		if got := float16bits(halfToFloat32(h)); got != h {
			t.Fatalf("float16bits(%v) = %#04x, want %#04x", halfToFloat32(h), got, h)
		}
	}
}

func TestFloat16_RoundsToNearestEven(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
		{65504, 0x7bff},
		{65520, 0x7c00},                    // halfway to the next binade rounds up: infinity
		{1 + 1.0/2048, 0x3c00},             // tie between 0x3c00 and 0x3c01: to even
		{1 + 3.0/2048, 0x3c02},             // tie between 0x3c01 and 0x3c02: to even
		{1.0 / (1 << 24), 0x0001},          // smallest subnormal
		{1.0 / (1 << 25), 0x0000},          // tie with zero: to even
		{1.5 / (1 << 24), 0x0002},          // tie between 1 and 2 subnormal units: to even
		{float32(math.Inf(1)), 0x7c00},     // infinity stays infinity
		{float32(math.Inf(-1)), 0xfc00},    //
		{float32(1e-30), 0x0000},           // underflow to zero
		{-float32(1e-30), 0x8000},          // keeps the sign
		{float32(6.103515625e-05), 0x0400}, // smallest normal
	} {
		if got := float16bits(tc.in); got != tc.want {
			t.Errorf("float16bits(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if got := float16bits(float32(math.NaN())); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
		t.Errorf("float16bits(NaN) = %#04x, not a NaN", got)
	}
}

// halfToFloat32 decodes binary16 exactly (every half is a float32).
func halfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	var bits uint32
	switch {
	case exp == 0x1f:
		bits = sign | 0x7f800000 | mant<<13
	case exp != 0:
		bits = sign | (exp+127-15)<<23 | mant<<13
	case mant == 0:
		bits = sign
	default:
		// Subnormal: normalize by shifting the mantissa up to the implicit bit.
		e := uint32(127 - 15 + 1)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		bits = sign | e<<23 | (mant&0x3ff)<<13
	}
	return math.Float32frombits(bits)
}

// A fresh machine's cache has no models folder: WriteFile makes it (issue 37:
// every embedded-engine test failed on "no such file or directory").
func TestWriteFile_MakesTheFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache", "maskgate", "models", "tiny.gguf")
	v := testVocab(t)
	if err := WriteFile(path, v, Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, write(t, v, Options{Seed: 1})) {
		t.Error("the file's bytes differ from Write's")
	}
}
