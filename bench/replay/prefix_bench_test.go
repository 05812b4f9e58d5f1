package main

import (
	"context"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/bench/replay/workload"
)

// BenchmarkPrefixEngine_Round500 is one round of the prefix model on the body the gateway
// sends under mask at 500 tools: the whole catalog (about 300 KB, 75k tokens) after a
// system prompt and a task. A first round, outside the measure, tokenizes the catalog
// and caches its blocks: every round measured finds them cached, as every round of a
// run but its first does.
func BenchmarkPrefixEngine_Round500(b *testing.B) {
	cat, err := workload.NewCatalog(workload.CatalogOptions{Tools: 500, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	s, err := workload.NewSession(cat, workload.SessionOptions{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	tg, err := newModelTarget(Config{}.withDefaults())
	if err != nil {
		b.Fatal(err)
	}
	be, log := tg.backend()
	body := []byte(`{"model":"replay","messages":[` + string(workload.SystemMessage("Run 001. ")) + `,` + string(s.UserMessage(0)) +
		`],"tools":` + string(cat.JSON) + `,"max_tokens":64}`)
	req := &backends.Request{Body: body, Model: "replay", Thread: "t"}
	ctx := context.Background()
	if _, err := be.ChatCompletion(ctx, req); err != nil {
		b.Fatal(err)
	}
	log.take("t")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.ChatCompletion(ctx, req); err != nil {
			b.Fatal(err)
		}
		log.take("t")
	}
}
