package tinymodel

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// Version names the generator's output format. Bump it with the golden
// checksum whenever Write's bytes change for the same Options: caches of
// generated models (internal/enginetest) key on it.
const Version = 1

// DefaultContextLength is the trained context of the default model: room for
// the 75k-token prompts of long agent sessions, with margin.
const DefaultContextLength = 131072

// Options shape the model. The zero value is the default model, seed 0: two
// layers with a 64-wide residual stream, one 8-wide attention head, and a
// 131072-token context. Its two vocabulary-sized matrices in f16 (about
// 16 MiB each) are most of the file.
//
// Attention is deliberately narrow. Prompt processing on a CPU is dominated
// by attention, which is quadratic in prompt length and linear in
// Layers*Heads (softmax) and Heads*HeadDim (products). With the defaults a
// cold 75k-token prompt takes under two minutes on two cores; four 16-wide
// heads took four minutes for 29k tokens. Layers: 1 roughly halves it.
type Options struct {
	// Seed picks the weights. Zero is a valid seed.
	Seed uint64
	// Layers is the number of transformer blocks. Zero means 2.
	Layers int
	// Dim is the embedding width. Zero means 64.
	Dim int
	// Heads is the number of attention (query) heads. Zero means 1.
	Heads int
	// KVHeads is the number of key/value heads; it must divide Heads. Zero
	// means 1.
	KVHeads int
	// HeadDim is the width of one attention head; it must be even (RoPE
	// rotates pairs). Zero means 8. It need not be Dim/Heads.
	HeadDim int
	// FFN is the feed-forward width. Zero means 4*Dim.
	FFN int
	// ContextLength is the trained context written to llama.context_length,
	// the ceiling engines put on num_ctx. Zero means DefaultContextLength.
	ContextLength int
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Layers, 2)
	def(&o.Dim, 64)
	def(&o.Heads, 1)
	def(&o.KVHeads, 1)
	def(&o.HeadDim, 8)
	def(&o.FFN, 4*o.Dim)
	def(&o.ContextLength, DefaultContextLength)
	return o
}

func (o Options) validate() error {
	switch {
	case o.Layers < 1, o.Dim < 1, o.Heads < 1, o.KVHeads < 1, o.HeadDim < 1, o.FFN < 1, o.ContextLength < 1:
		return fmt.Errorf("tinymodel: sizes must be positive: %+v", o)
	case o.HeadDim%2 != 0:
		return fmt.Errorf("tinymodel: HeadDim %d is odd; RoPE rotates pairs", o.HeadDim)
	case o.Heads%o.KVHeads != 0:
		return fmt.Errorf("tinymodel: KVHeads %d does not divide Heads %d", o.KVHeads, o.Heads)
	}
	return nil
}

// Write writes the model as GGUF to w. The bytes depend only on v and o.
func Write(w io.Writer, v *Vocab, o Options) error {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	f := &ggufFile{metadata: modelMetadata(v, o), tensors: modelTensors(len(v.Tokens), o)}
	return f.write(w)
}

// modelMetadata lists the keys llama.cpp's llama loader and Ollama read
// (llama-arch.cpp LLM_KV_NAMES; fs/ggml), in a fixed order.
func modelMetadata(v *Vocab, o Options) []metadata {
	u := func(n int) uint32 { return uint32(n) }
	return []metadata{
		{"general.architecture", "llama"},
		{"general.name", "maskgate-tiny"},
		{"general.file_type", uint32(1)}, // LLAMA_FTYPE_MOSTLY_F16
		{"llama.vocab_size", u(len(v.Tokens))},
		{"llama.context_length", u(o.ContextLength)},
		{"llama.embedding_length", u(o.Dim)},
		{"llama.block_count", u(o.Layers)},
		{"llama.feed_forward_length", u(o.FFN)},
		{"llama.attention.head_count", u(o.Heads)},
		{"llama.attention.head_count_kv", u(o.KVHeads)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"llama.rope.freq_base", float32(500000)},
		// llama.cpp requires the rotary width to equal the head width for
		// llama models, and reads the head width from key_length/value_length.
		{"llama.attention.key_length", u(o.HeadDim)},
		{"llama.attention.value_length", u(o.HeadDim)},
		{"llama.rope.dimension_count", u(o.HeadDim)},
		{"tokenizer.ggml.model", "gpt2"},
		// llama-bpe selects the Llama 3 pre-tokenizer regex in llama.cpp;
		// Ollama's own BPE falls back to the same regex for unknown names.
		{"tokenizer.ggml.pre", "llama-bpe"},
		{"tokenizer.ggml.tokens", v.Tokens},
		{"tokenizer.ggml.token_type", v.Types},
		{"tokenizer.ggml.merges", v.Merges},
		{"tokenizer.ggml.bos_token_id", v.EndOfText},
		{"tokenizer.ggml.eos_token_id", v.IMEnd},
		{"tokenizer.ggml.eot_token_id", v.IMEnd},
		{"tokenizer.ggml.padding_token_id", v.EndOfText},
		// ChatML prompts start with <|im_start|>, not a BOS token.
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
		{"tokenizer.chat_template", ChatTemplate},
	}
}

// modelTensors draws every weight from one PCG stream, tensor by tensor in
// the order listed, so a change of shape changes the bytes but never makes
// them depend on anything else.
func modelTensors(vocab int, o Options) []tensor {
	// Only Uint64 is used: PCG's output sequence is fixed by its algorithm,
	// while math/rand/v2's derived helpers (NormFloat64, Float32) are not
	// promised to stay the same across Go releases, and the checksum is.
	rng := rand.New(rand.NewPCG(o.Seed, 0x6d61736b67617465)) // "maskgate"
	qDim := o.HeadDim * o.Heads
	kvDim := o.HeadDim * o.KVHeads

	// Uniform in ±1/sqrt(fan-in) keeps activations near unit scale through
	// the residual stream, so the untrained net neither blows up to NaN nor
	// collapses to one repeated token.
	matrix := func(name string, in, out int) tensor {
		return f16Tensor(name, rng, in, out, 1/math.Sqrt(float64(in)))
	}

	ts := []tensor{
		f16Tensor("token_embd.weight", rng, o.Dim, vocab, 1),
		onesTensor("output_norm.weight", o.Dim),
		matrix("output.weight", o.Dim, vocab),
	}
	for i := range o.Layers {
		blk := func(name string) string { return fmt.Sprintf("blk.%d.%s.weight", i, name) }
		ts = append(ts,
			onesTensor(blk("attn_norm"), o.Dim),
			matrix(blk("attn_q"), o.Dim, qDim),
			matrix(blk("attn_k"), o.Dim, kvDim),
			matrix(blk("attn_v"), o.Dim, kvDim),
			matrix(blk("attn_output"), qDim, o.Dim),
			onesTensor(blk("ffn_norm"), o.Dim),
			matrix(blk("ffn_gate"), o.Dim, o.FFN),
			matrix(blk("ffn_up"), o.Dim, o.FFN),
			matrix(blk("ffn_down"), o.FFN, o.Dim),
		)
	}
	return ts
}

// f16Tensor is a [out][in] matrix (ggml dims {in, out}) of values uniform in
// [-scale, scale).
func f16Tensor(name string, rng *rand.Rand, in, out int, scale float64) tensor {
	data := make([]byte, 2*in*out)
	for i := 0; i < in*out; i++ {
		// The top 24 bits give a uniform float in [0, 1) exactly.
		u := float64(rng.Uint64()>>40) / (1 << 24)
		binary.LittleEndian.PutUint16(data[2*i:], float16bits(float32((2*u-1)*scale)))
	}
	return tensor{name: name, dims: []uint64{uint64(in), uint64(out)}, typ: ggmlTypeF16, data: data}
}

// onesTensor is an RMSNorm weight. Norms stay f32, as converters write them:
// ggml multiplies activations by them elementwise in f32.
func onesTensor(name string, n int) tensor {
	data := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(1))
	}
	return tensor{name: name, dims: []uint64{uint64(n)}, typ: ggmlTypeF32, data: data}
}
