package tinymodel_test

import (
	"context"
	"log"
	"os"

	"github.com/maskgate/maskgate/bench/tinymodel"
)

// Write the seed-1 model and a Modelfile for `ollama create tiny -f Modelfile`.
func ExampleWriteFile() {
	dir, err := tinymodel.OllamaTokenizerDir(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	vocab, err := tinymodel.LoadVocab(dir)
	if err != nil {
		log.Fatal(err)
	}
	if err := tinymodel.WriteFile("/tmp/tiny.gguf", vocab, tinymodel.Options{Seed: 1}); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("/tmp/Modelfile", []byte(tinymodel.Modelfile("/tmp/tiny.gguf")), 0o644); err != nil {
		log.Fatal(err)
	}
}
