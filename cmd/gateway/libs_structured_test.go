package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/maskgate/maskgate/internal/nodetest"
	"github.com/maskgate/maskgate/internal/schemacheck"
)

// libsPersonSchema is the JSON Schema of testdata/libs/structured.mjs's zod object, as
// z.toJSONSchema renders it (less $schema): the answer grammar's keywords only; zod's
// int() writes 2^53-1 as the integer's maximum, which the answer renders as at most 15
// digits.
const libsPersonSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","maxLength":12},` +
	`"color":{"type":"string","enum":["red","green","blue"]},` +
	`"ok":{"type":"boolean"},` +
	`"count":{"type":"integer","minimum":0,"maximum":9007199254740991}},` +
	`"required":["name","color","ok","count"],"additionalProperties":false}`

// TestLibs_Structured: each library asks for a structured output its own way, on
// several seeds, through the gateway over the real llama-server with the tiny random
// model, nothing forced on the engine side: the AI SDK's generateObject on
// @ai-sdk/openai's Responses, on its Chat Completions (openai.chat) and on
// @ai-sdk/openai-compatible; LangChain.js's withStructuredOutput (method jsonSchema) on
// Chat Completions; the Agents SDK's Agent with an outputType on Responses. Each library
// finishes without error and returns its parsed object, which validates against the
// schema (internal/schemacheck); the schema zod rendered is this test's; every request
// was a 200 on the door; and every /completion it caused carried a grammar and, where
// the library sends one (Chat Completions' seed; Responses has no seed field, so the AI
// SDK drops it there and the Agents SDK's providerData seed is not read by the door),
// the seed. The seed also goes into the prompt's text, which is what varies the
// Responses cases. The random model writes arbitrary text, so only the gateway's grammar
// makes the object valid.
func TestLibs_Structured(t *testing.T) {
	node := nodetest.Node(t, libsDir)
	r := newLibRig(t)
	var want any
	if err := json.Unmarshal([]byte(libsPersonSchema), &want); err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		door, path string
		seeded     bool // the library sends the seed in a field the engine gets
	}{
		{"aisdk-responses", "/v1/responses", false},
		{"aisdk-chat", "/v1/chat/completions", true},
		{"aisdk-compatible", "/v1/chat/completions", true},
		{"langchain", "/v1/chat/completions", true},
		{"agents", "/v1/responses", false},
	} {
		for seed := 1; seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", d.door, seed), func(t *testing.T) {
				from, wfrom := r.front.len(), r.wire.len()
				ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, node, "structured.mjs", d.door)
				cmd.Dir = libsDir
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NODE_NO_WARNINGS=1",
					"BASE_URL=" + r.base, "MODEL=" + r.ls.Model, fmt.Sprintf("SEED=%d", seed)}
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				var res struct {
					Object json.RawMessage `json:"object"`
					Schema map[string]any  `json:"schema"`
					Error  json.RawMessage `json:"error"`
				}
				if jerr := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil || jerr != nil || res.Error != nil {
					t.Fatalf("node structured.mjs %s: %v (%v)\nstdout: %s\nstderr: %s\ngateway log:\n%s", d.door, err, jerr,
						stdout.Bytes(), stderr.Bytes(), r.logs.String())
				}
				delete(res.Schema, "$schema")
				if !reflect.DeepEqual(res.Schema, want) {
					t.Errorf("zod rendered the schema %v, want %s", res.Schema, libsPersonSchema)
				}
				// schemacheck reads no numeric bounds: the schema less them, and the count's by hand.
				check := strings.Replace(libsPersonSchema, `,"minimum":0,"maximum":9007199254740991`, "", 1)
				if err := schemacheck.Validate([]byte(check), res.Object); err != nil {
					t.Errorf("the library's object %s does not validate: %v", res.Object, err)
				}
				var obj struct {
					Count json.Number `json:"count"`
				}
				if err := json.Unmarshal(res.Object, &obj); err != nil {
					t.Errorf("the library's object %s: %v", res.Object, err)
				} else if n, err := obj.Count.Int64(); err != nil || n < 0 || n > 1<<53-1 {
					t.Errorf("count %s is not an integer from 0 to 2^53-1", obj.Count)
				}
				calls := r.front.all()[from:]
				if len(calls) == 0 {
					t.Fatal("the library made no request of the gateway")
				}
				for _, fc := range calls {
					if fc.Method != http.MethodPost || fc.Path != d.path || fc.Status != http.StatusOK {
						t.Errorf("the library sent %s %s, answered %d; want POST %s answered 200", fc.Method, fc.Path, fc.Status, d.path)
					}
				}
				r.wire.settle(t, wfrom)
				comps := r.wire.since(wfrom, "/completion")
				if len(comps) == 0 {
					t.Fatal("no /completion reached the engine")
				}
				for _, w := range comps {
					var body struct {
						Grammar string `json:"grammar"`
						Seed    *int   `json:"seed"`
					}
					if err := json.Unmarshal(w.req, &body); err != nil {
						t.Fatal(err)
					}
					if body.Grammar == "" {
						t.Errorf("/completion #%d carried no grammar: %.400s", w.seq, w.req)
					}
					if d.seeded && (body.Seed == nil || *body.Seed != seed) {
						t.Errorf("/completion #%d carried seed %v, want %d", w.seq, body.Seed, seed)
					}
				}
				t.Logf("%s seed %d: %d requests, object %s", d.door, seed, len(calls), res.Object)
			})
		}
	}
}
