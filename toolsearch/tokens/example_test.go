package tokens_test

import (
	"errors"
	"fmt"

	"github.com/maskgate/maskgate/toolsearch/tokens"
)

func ExampleCheck() {
	err := tokens.Check(30000, 4096, 32768)
	var be *tokens.BudgetError
	if errors.As(err, &be) {
		fmt.Println(be.Param, be.Over)
		fmt.Println(be.Message)
	}
	// Output:
	// max_tokens 1328
	// This model's context window is 32768 tokens; the prompt (messages and tools) is about 30000 tokens and max_tokens asks for 4096 more, 1328 tokens over: set max_tokens to at most 2768, or shorten the messages.
}
