package gateway

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/toolsearch/tokens"
)

// checkBudget refuses, with a 400 naming what to cut, a request that cannot fit the
// model's context window. It runs only where the upstream's window is configured; the
// count is tiktoken's over the JSON the engine will render (tools cached by content), so
// it is an estimate, not the engine's own tokenization.
func (s *Server) checkBudget(up *Upstream, req *oai.Object, tools []byte, messages [][]byte) error {
	if up.ContextWindow <= 0 || s.opt.Tokens == nil {
		return nil
	}
	prompt := 0
	if len(tools) > 0 {
		prompt += s.opt.Tokens.CatalogTokens(tools)
	}
	for _, m := range messages {
		prompt += s.opt.Tokens.Count(m)
	}
	maxTokens := 0
	for _, key := range []string{"max_completion_tokens", "max_tokens"} {
		if raw, ok := req.Get(key); ok {
			if n, err := strconv.Atoi(string(raw)); err == nil {
				maxTokens = n
				break
			}
		}
	}
	err := tokens.Check(prompt, maxTokens, up.ContextWindow)
	var be *tokens.BudgetError
	if errors.As(err, &be) {
		return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: be.Param, Code: be.Code, Message: be.Message}
	}
	return err
}
