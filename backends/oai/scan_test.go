package oai

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
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

// special8 is exact: it reports a special byte exactly when one of the eight is '"', '\\'
// or a control character.
func TestSpecial8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	interesting := []byte{0, 0x1f, 0x20, '"', '\\', '!', '#', 0x7f, 0x80, 0xff, 'a', '[', ']', 0x21, 0x22 + 0x80, 0x5c + 0x80, 0x9f}
	for range 200000 {
		var b [8]byte
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = interesting[r.IntN(len(interesting))]
			} else {
				b[i] = byte(r.IntN(256))
			}
		}
		want := false
		for _, c := range b {
			want = want || c == '"' || c == '\\' || c < 0x20
		}
		if got := special8(binary.LittleEndian.Uint64(b[:])); got != want {
			t.Fatalf("special8(% x) = %v, want %v", b, got, want)
		}
	}
}

// BenchmarkParseEnvelopeLarge is the scan of a 500-tool request (318 KB).
func BenchmarkParseEnvelopeLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[`)
	for i := range 500 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"type":"function","function":{"name":"tool_%03d","description":"Does the thing number %d with care, politely, and reports back what it did in plain words.","parameters":{"type":"object","properties":{"query":{"type":"string","description":"What to look for, in the user's own words."},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["query"]}}}`, i, i)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseEnvelope(body); err != nil {
			b.Fatal(err)
		}
	}
}
