// Command tinymodel writes maskgate's random-weight test model as a GGUF file,
// and optionally an Ollama Modelfile for it:
//
//	go run ./cmd/tinymodel -o tiny.gguf -modelfile Modelfile && ollama create tiny -f Modelfile
//
// Run it inside the maskgate module: the vocabulary is read from the
// github.com/ollama/ollama module in the Go module cache.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/maskgate/maskgate/bench/tinymodel"
)

func main() {
	out := flag.String("o", "tinymodel.gguf", "GGUF file to write")
	modelfile := flag.String("modelfile", "", "also write an Ollama Modelfile here (FROM the absolute -o path)")
	seed := flag.Uint64("seed", 0, "weight seed; the same seed writes the same bytes")
	layers := flag.Int("layers", 0, "transformer blocks (0: 2)")
	dim := flag.Int("dim", 0, "embedding width (0: 64)")
	heads := flag.Int("heads", 0, "attention heads (0: 1)")
	kvHeads := flag.Int("kvheads", 0, "key/value heads (0: 1)")
	headDim := flag.Int("headdim", 0, "width of one attention head (0: 8)")
	vocabDir := flag.String("vocab", "", "folder with encoder.json and vocab.bpe (default: the Ollama module's Llama 3.2 test tokenizer)")
	flag.Parse()

	if err := run(*out, *modelfile, *vocabDir, tinymodel.Options{
		Seed: *seed, Layers: *layers, Dim: *dim, Heads: *heads, KVHeads: *kvHeads, HeadDim: *headDim,
	}); err != nil {
		fmt.Fprintln(os.Stderr, "tinymodel:", err)
		os.Exit(1)
	}
}

func run(out, modelfile, vocabDir string, opts tinymodel.Options) error {
	if vocabDir == "" {
		dir, err := tinymodel.OllamaTokenizerDir(context.Background())
		if err != nil {
			return err
		}
		vocabDir = dir
	}
	vocab, err := tinymodel.LoadVocab(vocabDir)
	if err != nil {
		return err
	}
	if err := tinymodel.WriteFile(out, vocab, opts); err != nil {
		return err
	}
	if modelfile == "" {
		return nil
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	return os.WriteFile(modelfile, []byte(tinymodel.Modelfile(abs)), 0o644)
}
