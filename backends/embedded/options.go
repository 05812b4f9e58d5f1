package embedded

import "time"

// Options configure an embedded engine. The zero value of every field but ModelPath is a
// working default.
type Options struct {
	// ModelPath is the GGUF file to load. Required.
	ModelPath string
	// NumCtx is the context length of each slot, in tokens: a prompt plus its answer must
	// fit. Zero means 8192.
	NumCtx int
	// Slots is how many prompts stay in the KV cache for reuse by later requests (one
	// llama.cpp sequence each). Zero means 2.
	Slots int
	// QueueSize is how many requests may wait while one is decoding; one more is
	// refused with a 429. Zero means 8.
	QueueSize int
	// Threads is the number of CPU threads llama.cpp uses. Zero means runtime.NumCPU().
	Threads int
	// Format is the model's tool-call wire format (hermes, llama3, mistral, harmony,
	// deepseek). If empty, it is detected from the chat template; a template no mask
	// can express leaves tools unconstrained (ConstrainsTools false).
	Format string
	// Now is the clock for the "created" field. Nil means time.Now.
	Now func() time.Time
}

const (
	defaultNumCtx    = 8192
	defaultSlots     = 2
	defaultQueueSize = 8
	batchSize        = 512 // tokens per llama_decode call during prefill
)

func (o Options) withDefaults() Options {
	if o.NumCtx == 0 {
		o.NumCtx = defaultNumCtx
	}
	if o.Slots == 0 {
		o.Slots = defaultSlots
	}
	if o.QueueSize == 0 {
		o.QueueSize = defaultQueueSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Masker constrains decoding: at every step the engine asks it which tokens may come next
// and sets every other logit to -Inf before sampling, then tells it which token was
// chosen. A Masker belongs to one request; the engine calls it from one goroutine. A
// Masker with a Close() method is closed when its request ends, however it ends.
type Masker interface {
	// Allowed fills dst, a bitset over the vocabulary (token t is allowed when
	// dst[t/64]&(1<<(t%64)) != 0; dst is zeroed before the call), and returns true. It
	// returns false when every token is allowed at this step; dst is then ignored, so
	// free text costs nothing.
	Allowed(dst []uint64) bool
	// Accept advances the state by the sampled token. An error ends the request.
	Accept(token int) error
}
