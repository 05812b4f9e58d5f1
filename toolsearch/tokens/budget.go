package tokens

import "fmt"

// BudgetError is a request that cannot fit the model's context window. Message is for the
// client as is; the gateway answers it with a 400 in the OpenAI error envelope, type
// "invalid_request_error", with Param and Code.
type BudgetError struct {
	// Message says by how much the request overflows and what to change.
	Message string
	// Param is the request field to change: "messages" when the prompt alone does not
	// fit, "max_tokens" when the prompt fits but not with the room asked for the answer.
	Param string
	// Code is "context_length_exceeded", as OpenAI reports it.
	Code string
	// Prompt, MaxTokens and ContextWindow are Check's arguments; Over is how many tokens
	// too many the request asks for.
	Prompt, MaxTokens, ContextWindow, Over int
}

func (e *BudgetError) Error() string { return e.Message }

// Check reports whether a prompt of about promptEstimate tokens and an answer of up to
// maxTokens fit a context window of contextWindow tokens. A contextWindow of zero or less
// means unknown: nothing is refused. A maxTokens of zero or less means the client set
// none: the prompt must leave room for at least one token. The error is a *BudgetError.
//
// promptEstimate is an estimate (see the package doc); a caller that wants a margin for
// the chat template adds it before calling.
func Check(promptEstimate, maxTokens, contextWindow int) error {
	if contextWindow <= 0 {
		return nil
	}
	e := &BudgetError{Code: "context_length_exceeded", Prompt: promptEstimate, MaxTokens: maxTokens, ContextWindow: contextWindow}
	if promptEstimate >= contextWindow {
		e.Param = "messages"
		e.Over = promptEstimate - contextWindow + 1
		e.Message = fmt.Sprintf("This model's context window is %d tokens, and the prompt (messages and tools) is about %d tokens, "+
			"leaving no room for an answer: remove at least %s of messages or tools, or use a model with a larger context window.",
			contextWindow, promptEstimate, plural(e.Over))
		return e
	}
	if maxTokens > 0 && promptEstimate+maxTokens > contextWindow {
		e.Param = "max_tokens"
		e.Over = promptEstimate + maxTokens - contextWindow
		e.Message = fmt.Sprintf("This model's context window is %d tokens; the prompt (messages and tools) is about %d tokens and max_tokens asks for %d more, "+
			"%s over: set max_tokens to at most %d, or shorten the messages.",
			contextWindow, promptEstimate, maxTokens, plural(e.Over), contextWindow-promptEstimate)
		return e
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return "1 token"
	}
	return fmt.Sprintf("%d tokens", n)
}
