package masking

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/enginetest"
)

// BenchmarkLlamaServer_ConstrainedDecode is decoding on a real llama-server (the tiny
// random-weight model, 128k vocabulary) under the gateway's required-mode tool-call
// grammar for 5 to 500 allowed tools of bench/retrieval's catalogs, against the same
// request without a grammar, interleaved request by request in one run. The random
// model's samples almost never satisfy the grammar, so llama.cpp runs the grammar over
// the whole vocabulary at nearly every step: this is the worst case (a trained model
// writing a call mostly takes the one-token check instead; BenchmarkGrammarDecode in the
// llamacpp-tagged tests times that). Reported: ms per decoded token under the grammar and
// without, from llama-server's own timings, and their ratio.
//
//	go test -run '^$' -bench LlamaServer_ConstrainedDecode -benchtime 3x ./masking
func BenchmarkLlamaServer_ConstrainedDecode(b *testing.B) {
	ls := enginetest.Llama(b)
	names, params := decodeCatalog(b)
	client := &http.Client{Timeout: 10 * time.Minute}
	for _, n := range []int{5, 50, 200, 500} {
		g, err := GBNF(Spec{Format: Hermes(), Allowed: names[:n], Mode: ModeRequired}, params)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			var plain, constrained [2]float64 // ms, tokens
			seed := 0
			for b.Loop() {
				seed++
				for i, grammar := range []string{"", g.Grammar} {
					ms, toks := completion(b, client, ls.URL, grammar, seed)
					acc := &plain
					if i == 1 {
						acc = &constrained
					}
					acc[0] += ms
					acc[1] += toks
				}
			}
			p, c := plain[0]/plain[1], constrained[0]/constrained[1]
			b.ReportMetric(p, "plain-ms/token")
			b.ReportMetric(c, "grammar-ms/token")
			b.ReportMetric(c/p, "ratio")
			b.ReportMetric(float64(len(g.Grammar)), "grammar-bytes")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// completion posts one /completion of up to 48 tokens and returns llama-server's decode
// time and token count (timings.predicted_ms, predicted_n).
func completion(b *testing.B, client *http.Client, url, grammar string, seed int) (ms, tokens float64) {
	b.Helper()
	req := map[string]any{"prompt": "Call one of the tools for this request: " + strconv.Itoa(seed), "n_predict": 48,
		"seed": seed, "cache_prompt": false}
	if grammar != "" {
		req["grammar"] = grammar
	}
	body, _ := json.Marshal(req)
	resp, err := client.Post(url+"/completion", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Timings struct {
			PredictedN  float64 `json:"predicted_n"`
			PredictedMS float64 `json:"predicted_ms"`
		} `json:"timings"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("/completion: status %d, %v", resp.StatusCode, err)
	}
	if out.Timings.PredictedN < 2 {
		b.Fatalf("/completion decoded %v tokens", out.Timings.PredictedN)
	}
	return out.Timings.PredictedMS, out.Timings.PredictedN
}

// decodeCatalog reads bench/retrieval's catalogs: the MCP servers' tools, then the
// 303-tool catalog, each name once, then renamed copies up to 500.
func decodeCatalog(b *testing.B) ([]string, map[string]json.RawMessage) {
	b.Helper()
	files, err := filepath.Glob("../bench/retrieval/testdata/mcp/*.json")
	if err != nil || len(files) == 0 {
		b.Fatalf("no MCP catalogs: %v", err)
	}
	files = append(files, "../bench/retrieval/testdata/catalog.json")
	var names []string
	params := map[string]json.RawMessage{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &tools); err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		for _, t := range tools {
			if n := t.Function.Name; n != "" && params[n] == nil {
				names = append(names, n)
				params[n] = t.Function.Parameters
			}
		}
	}
	for i := 0; len(names) < 500; i++ {
		n := "copy_" + names[i]
		names, params[n] = append(names, n), params[names[i]]
	}
	return names, params
}
