package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// searchContent is search_tools' result.
type searchContent struct {
	Results []resultItem `json:"results"`
	Message string       `json:"message"`
	// Tools are the definitions the search loaded (strategy index, auto_load).
	Tools json.RawMessage `json:"tools,omitempty"`
}

type resultItem struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

const searchUsage = `search_tools needs {"query": "keywords for what the tool should do"}, e.g. {"query": "create github issue"}`

func searchTools(ctx context.Context, raw string, env *Env) Outcome {
	args, err := decodeArgs(raw)
	if err != nil {
		return failure("invalid arguments: " + err.Error() + "; " + searchUsage)
	}
	v, ok := arg(args, "query", "q")
	if !ok {
		return failure("missing query; " + searchUsage)
	}
	var query string
	if err := json.Unmarshal(v, &query); err != nil {
		return failure("query must be a string; " + searchUsage)
	}
	query = strings.TrimSpace(query)
	if query == "" {
		return failure("query is empty; " + searchUsage)
	}
	if env.Searcher == nil {
		return failure("tool search is not available for this request")
	}

	var allow func(string) bool
	if env.Allowed != nil {
		allow = func(name string) bool {
			return env.allowed(PhaseSearch, name) && (!env.AutoLoad || env.allowed(PhaseLoad, name))
		}
	}
	found, serr := env.search(ctx, query, env.TopK, env.MinScore, allow)
	out := Outcome{}
	if serr != nil {
		if found == nil {
			out = failure("tool search failed; try again")
			out.Log = fmt.Errorf("search_tools: %w", serr) // not the query: it is the model's, from the prompt
			return out
		}
		out.Log = fmt.Errorf("search_tools (lexical results returned): %w", serr)
	}

	c := searchContent{Results: make([]resultItem, 0, len(found))}
	for _, r := range found {
		c.Results = append(c.Results, resultItem{Name: r.Name, Description: r.Description, Score: round2(r.Score)})
	}
	switch {
	case len(found) == 0:
		c.Message = fmt.Sprintf(`No tools found matching %s. Try other keywords: what the tool does ("send email") or the product ("github").`, quote(query))
	case env.AutoLoad:
		seen := map[string]bool{}
		for _, r := range found {
			if !seen[r.Name] && !env.loaded(r.Name) {
				out.Load = append(out.Load, r.Name)
			}
			seen[r.Name] = true
		}
		c.Message = fmt.Sprintf("Found %s. %s loaded: call %s directly.", count(len(found), "tool"), theyAre(len(found)), itOrThem(len(found)))
		if c.Tools = env.define(out.Load); c.Tools != nil && len(out.Load) > 0 {
			c.Message += " " + definitionsNote
		}
	default:
		c.Message = fmt.Sprintf(`Found %s. To use one, call load_tool with {"toolName": "<name>"} (or {"toolNames": ["<name>", ...]} for several), then call it directly.`, count(len(found), "tool"))
	}
	out.Content = encode(c)
	return out
}

// round2 rounds a score to two decimals, as Mastra reports them.
func round2(s float64) float64 {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0
	}
	return math.Round(s*100) / 100
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func theyAre(n int) string {
	if n == 1 {
		return "It is"
	}
	return "They are"
}

func itOrThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
