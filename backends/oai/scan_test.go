package oai

import (
	"encoding/json"
	"testing"
)

var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `null`, ` {"a" : [1, "x\u00e9\n", {}, null]} `,
	`01`, `1.`, `.5`, `-`, `1e`, `+1`, `{"a":1,}`, `[1,]`, `{"a"}`, `{a:1}`, `"\x"`, `"\u12"`, "\"a\tb\"",
	`tru`, `nul`, `{"a":1}x`, `[`, `{"a":`, `"unterminated`, `[1 2]`, `{"a":1 "b":2}`, "\"\xff\"",
}

func TestValid_AgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validityCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		o, err := ParseObject(b)
		var m map[string]json.RawMessage
		isObject := json.Unmarshal(b, &m) == nil && m != nil
		if (err == nil) != isObject {
			t.Fatalf("ParseObject(%q) error %v, encoding/json object %v", b, err, isObject)
		}
		if err == nil {
			for k, v := range m {
				got, ok := o.Get(k)
				if !ok || string(got) != string(v) {
					t.Fatalf("Get(%q) = %q, want %q", k, got, v)
				}
			}
		}
	})
}

func TestValid_DeepNestingIsRefused(t *testing.T) {
	deep := make([]byte, 0, 2*maxDepth+4)
	for i := 0; i < maxDepth+1; i++ {
		deep = append(deep, '[')
	}
	for i := 0; i < maxDepth+1; i++ {
		deep = append(deep, ']')
	}
	if Valid(deep) {
		t.Error("nesting past maxDepth accepted")
	}
}

func BenchmarkParseEnvelope(b *testing.B) {
	body := []byte(`{"model":"m","stream":true,"messages":[{"role":"system","content":"You are helpful."},{"role":"user","content":"What is the weather in Paris today?"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Get the weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := ParseEnvelope(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGetChunk(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hello"},"finish_reason":null}],"usage":null}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := Get(chunk, "usage"); !ok {
			b.Fatal("no usage")
		}
	}
}
