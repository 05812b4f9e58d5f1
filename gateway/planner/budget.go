package planner

import (
	"errors"
	"strconv"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// PromptTokens estimates a prompt as the budget counts it: tiktoken over the tools
// (cached by content) and each message; four bytes a token without a counter.
func (pl *Planner) PromptTokens(tools []byte, messages [][]byte) int {
	n := 0
	if len(tools) > 0 {
		if pl.cfg.Tokens != nil {
			n += pl.cfg.Tokens.CatalogTokens(tools)
		} else {
			n += pl.countTokens(tools)
		}
	}
	for _, m := range messages {
		n += pl.countTokens(m)
	}
	return n
}

// CheckBudget refuses, with a 400 naming what to cut, a request that cannot fit the
// model's context window of window tokens. It runs only where the window is known; the
// count is tiktoken's over the JSON the engine will render (tools cached by content), so
// it is an estimate, not the engine's own tokenization.
func (pl *Planner) CheckBudget(window int, req *oai.Object, tools []byte, messages [][]byte) error {
	if window <= 0 || pl.cfg.Tokens == nil {
		return nil
	}
	prompt := pl.PromptTokens(tools, messages)
	maxTokens := 0
	for _, key := range []string{"max_completion_tokens", "max_tokens"} {
		if raw, ok := req.Get(key); ok {
			if n, err := strconv.Atoi(string(raw)); err == nil {
				maxTokens = n
				break
			}
		}
	}
	err := tokens.Check(prompt, maxTokens, window)
	var be *tokens.BudgetError
	if errors.As(err, &be) {
		// OpenAI says context_length_exceeded with param messages whichever part is too
		// long; the sizes let the Messages door say it as Anthropic does.
		o := oai.Overflow{Prompt: be.Prompt, Window: be.ContextWindow}
		if be.Param == "max_tokens" {
			o.Completion = be.MaxTokens
		}
		return backends.ContextOverflow(be.Message, o, err)
	}
	return err
}
