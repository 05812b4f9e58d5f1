//go:build llamacpp

package embedded

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ollama/ollama/llama"
	"github.com/ollama/ollama/ml"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/chatlayer"
)

// initOnce guards llama.BackendInit, which initializes process-wide state in llama.cpp and
// ggml: it is the one package-level variable, because what it guards is per process.
var initOnce sync.Once

// Backend is an in-process llama.cpp engine serving one GGUF model.
type Backend struct {
	opt   Options
	model *llama.Model
	lc    *llama.Context
	tmpl  *chatTemplate
	// format is the model's tool-call wire format, named or detected from its template.
	format callFormat
	vocab  int

	jobs chan *job
	quit chan struct{}
	done chan struct{} // closed when the worker has exited
	stop sync.Once
	seq  atomic.Uint64 // completion ids

	masks toolMasks

	// Owned by the worker goroutine.
	slots []*slot
	batch *llama.Batch
	clock uint64 // for least-recently-used slot choice
}

var _ backends.Backend = (*Backend)(nil)

// New loads the model and starts the worker. Close releases it.
func New(opt Options) (*Backend, error) {
	opt = opt.withDefaults()
	switch {
	case opt.ModelPath == "":
		return nil, errors.New("embedded: Options.ModelPath is empty; set it to a GGUF file")
	case opt.NumCtx < 16, opt.Slots < 1, opt.QueueSize < 0, opt.Threads < 0:
		return nil, fmt.Errorf("embedded: NumCtx (%d) must be 16 or more, Slots (%d) 1 or more, QueueSize (%d) and Threads (%d) 0 or more",
			opt.NumCtx, opt.Slots, opt.QueueSize, opt.Threads)
	}
	threads := opt.Threads
	if threads == 0 {
		threads = runtime.NumCPU()
	}
	src, err := readChatTemplate(opt.ModelPath)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	tmpl, err := compileTemplate(src)
	if err != nil {
		return nil, fmt.Errorf("embedded: %s: %w", opt.ModelPath, err)
	}
	format, err := formatFor(opt.Format, src)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}

	initOnce.Do(llama.BackendInit)
	model, err := llama.LoadModelFromFile(opt.ModelPath, llama.ModelParams{UseMmap: true})
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	// Each slot gets NumCtx tokens: llama.cpp splits n_ctx between its sequences.
	params := llama.NewContextParams(opt.NumCtx*opt.Slots, batchSize, opt.Slots, threads, ml.FlashAttentionAuto, "")
	lc, err := llama.NewContextWithModel(model, params)
	if err != nil {
		llama.FreeModel(model)
		return nil, fmt.Errorf("embedded: %s with num_ctx %d x %d slots: %w", opt.ModelPath, opt.NumCtx, opt.Slots, err)
	}
	batch, err := llama.NewBatch(batchSize, 1, 0)
	if err != nil {
		llama.FreeModel(model)
		return nil, fmt.Errorf("embedded: %w", err)
	}

	b := &Backend{
		opt:    opt,
		model:  model,
		lc:     lc,
		tmpl:   tmpl,
		format: format,
		vocab:  model.NumVocab(),
		jobs:   make(chan *job, opt.QueueSize),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		batch:  batch,
	}
	for i := range opt.Slots {
		b.slots = append(b.slots, &slot{id: i})
	}
	go b.work()
	return b, nil
}

// Close stops the worker after the request it is running, fails queued requests, and
// frees the model. The llama.cpp context itself has no free function in the bindings and
// stays allocated until the process exits.
func (b *Backend) Close() error {
	b.stop.Do(func() {
		close(b.quit)
		<-b.done
		b.batch.Free()
		llama.FreeModel(b.model)
	})
	return nil
}

// Tokenize returns the model's tokens for text, with special tokens parsed and the BOS
// token added when the model asks for one: the tokens a rendered prompt becomes.
func (b *Backend) Tokenize(text string) ([]int, error) {
	return b.model.Tokenize(text, true, true)
}

// ChatCompletion answers one request, streaming or not. It returns a 429 when the queue
// is full and an error, without output, when the request fails before its first token.
func (b *Backend) ChatCompletion(ctx context.Context, req *backends.Request) (*backends.Response, error) {
	r, err := parseRequest(req.Body)
	if err != nil {
		return nil, err
	}
	m, err := b.maskFor(req, r)
	if err != nil {
		return nil, err
	}
	resp, err := b.complete(ctx, req, r, m)
	if err == nil && m != nil {
		resp.Strategy = "mask" // the gateway decides whether the label counts (backendLabel)
	}
	return resp, err
}

// Prompt returns the prompt text req becomes through the model's chat template: what
// the engine prefills, and so what its prefix cache is keyed on. Nothing is decoded.
func (b *Backend) Prompt(req *backends.Request) (string, error) {
	r, err := parseRequest(req.Body)
	if err != nil {
		return "", err
	}
	return b.render(r, req)
}

// render is r's prompt, with its history's reasoning and its reasoning switch (the
// body's, else req.ReasoningEffort).
func (b *Backend) render(r *request, req *backends.Request) (string, error) {
	if r.effort == "" {
		r.effort = req.ReasoningEffort
	}
	x, err := r.extra(b.format.parse)
	if err != nil {
		return "", err
	}
	prompt, err := b.tmpl.renderWith(r.chat.Messages, r.chat.Tools, b.format.parse, req.CatalogFirst, x)
	if err != nil {
		return "", badRequest("messages", err.Error())
	}
	return prompt, nil
}

// ConstrainsTools says the engine enforces Request.Allowed token by token, so the
// gateway may keep the whole catalog in the prompt.
func (b *Backend) ConstrainsTools() bool { return b.format.constrains }

// ChatCompletionMasked is ChatCompletion with a Masker deciding which tokens may be
// sampled at each step. A nil Masker leaves decoding unconstrained.
func (b *Backend) ChatCompletionMasked(ctx context.Context, req *backends.Request, m Masker) (*backends.Response, error) {
	r, err := parseRequest(req.Body)
	if err != nil {
		return nil, err
	}
	return b.complete(ctx, req, r, m)
}

func (b *Backend) complete(ctx context.Context, req *backends.Request, r *request, m Masker) (*backends.Response, error) {
	prompt, err := b.render(r, req)
	if err != nil {
		return nil, err
	}
	tokens, err := b.Tokenize(prompt)
	if err != nil {
		return nil, fmt.Errorf("embedded: tokenize: %w", err)
	}
	if len(tokens) == 0 {
		return nil, badRequest("messages", "the chat template rendered an empty prompt")
	}
	if len(tokens) >= b.opt.NumCtx {
		return nil, &backends.Error{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: "messages",
			Code:    "context_length_exceeded",
			Message: fmt.Sprintf("the prompt is %d tokens; the embedded engine's context is %d (raise num_ctx)", len(tokens), b.opt.NumCtx)}
	}
	model := req.Model
	if model == "" {
		model = r.chat.Model
	}
	jctx, cancel := context.WithCancel(ctx)
	j := &job{
		ctx:    jctx,
		req:    r,
		prompt: tokens,
		mask:   m,
		stream: req.Stream,
		meta:   meta{id: fmt.Sprintf("chatcmpl-embedded-%d", b.seq.Add(1)), created: b.opt.Now().Unix(), model: model},
		done:   make(chan struct{}),
	}
	if thinks(b.format.parse) {
		j.inside = chatlayer.StartsInside(prompt)
		j.think = chatlayer.NewThink(j.inside)
		if a, ok := m.(*answerMasker); ok && j.inside {
			if err := a.closeThink(); err != nil {
				cancel()
				return nil, err
			}
		}
	}
	if req.Stream {
		j.events = make(chan event)
	}
	select {
	case b.jobs <- j:
	default:
		cancel()
		return nil, &backends.Error{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "queue_full",
			RetryAfter: "1", Message: fmt.Sprintf("the embedded engine's queue is full (%d waiting); retry shortly", b.opt.QueueSize)}
	}
	if req.Stream {
		return b.startStream(ctx, j, cancel)
	}
	defer cancel()
	select {
	case <-j.done:
	case <-ctx.Done(): // the worker skips or stops it at its next step
		return nil, fmt.Errorf("embedded: %w", context.Cause(ctx))
	}
	if j.err != nil {
		return nil, j.err
	}
	return &backends.Response{Body: j.body, Cache: backends.CacheReported}, nil
}

// work runs queued requests one at a time until Close.
func (b *Backend) work() {
	defer close(b.done)
	for {
		select {
		case <-b.quit:
			for {
				select {
				case j := <-b.jobs:
					j.fail(errors.New("embedded: the engine is closed"))
				default:
					return
				}
			}
		case j := <-b.jobs:
			b.run(j)
		}
	}
}
