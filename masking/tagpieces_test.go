package masking

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomToolParams gives each name random parameters: absent, null, indented
// JSON whose strings hold what JSON escaping treats specially (quotes,
// backslashes, control escapes, <>&, U+2028, non-ASCII, a raw invalid UTF-8
// byte), or, rarely, invalid JSON.
func randomToolParams(r *rand.Rand, names []string) map[string]json.RawMessage {
	texts := []string{`plain`, `a \"quoted\" word`, `back\\slash`, `tab\tnew\nline\u0001`, `<b>&amp;</b>`, "line\u2028sep", `日本 émoji😀`, "bad\xffbyte", `\u00e9\ud83d\ude00`}
	params := make(map[string]json.RawMessage, len(names))
	for _, n := range names {
		switch k := r.IntN(12); {
		case k == 0:
		case k == 1:
			params[n] = json.RawMessage(`null`)
		case k == 2 && r.IntN(4) == 0:
			params[n] = json.RawMessage(`{"type":`)
		default:
			params[n] = json.RawMessage(fmt.Sprintf("{\n  \"type\": \"object\",\n  \"properties\": {\"%s\": {\"type\": \"string\", \"description\": \"%s\"}}\n}",
				texts[r.IntN(len(texts))], texts[r.IntN(len(texts))]))
		}
	}
	return params
}

// TestCatalogTag_PiecesEqualRendering: the catalog's tag, copied from its
// per-tool pieces, is byte for byte the tag rendered from the schemas
// (StructuralTag, the reference), and its string form is that tag as
// encoding/json writes the string, over random catalogs, loaded subsets in
// random order (with duplicates, names outside the catalog, runs of
// consecutive tools), modes and every format; one catalog serves several
// formats in turn. Catalogs are sorted (NewCatalog) or in the names' order
// (NewCatalogInOrder).
func TestCatalogTag_PiecesEqualRendering(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	for i := range 300 {
		names := catalog(r, 1+r.IntN(40))
		params := randomToolParams(r, names)
		cat := NewCatalog(params)
		if i%2 == 1 { // numbered in a given order, with a repeat
			cat = NewCatalogInOrder(append(names, names[0]), params)
		}
		for range 3 {
			f, _ := FormatByName(FormatNames()[r.IntN(len(FormatNames()))])
			spec := Spec{Format: f, Mode: Mode(r.IntN(3))}
			switch r.IntN(3) {
			case 0: // the whole catalog in its own order: one run
				spec.Allowed = slices.Sorted(slices.Values(names))
			default:
				for _, n := range names {
					if r.IntN(2) == 0 {
						spec.Allowed = append(spec.Allowed, n)
					}
				}
				if r.IntN(3) == 0 {
					spec.Allowed = append(spec.Allowed, "outside_"+names[0])
				}
				if len(spec.Allowed) > 0 && r.IntN(4) == 0 {
					spec.Allowed = append(spec.Allowed, spec.Allowed[0])
				}
				r.Shuffle(len(spec.Allowed), func(a, b int) { spec.Allowed[a], spec.Allowed[b] = spec.Allowed[b], spec.Allowed[a] })
			}
			if spec.Mode == ModeSpecified {
				spec.Namespace = names[r.IntN(len(names))][:1]
			}
			want, werr := StructuralTag(spec, params)
			got, gerr := cat.AppendStructuralTag([]byte("keep"), spec)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("%d: err %v, want %v", i, gerr, werr)
			}
			if werr != nil {
				if string(got) != "keep" {
					t.Fatalf("%d: dst changed on error", i)
				}
				continue
			}
			if !bytes.Equal(got[4:], want) || string(got[:4]) != "keep" {
				t.Fatalf("%d: %s\n got %s\nwant %s", i, f.Name, got, want)
			}
			var enc bytes.Buffer
			e := json.NewEncoder(&enc)
			e.SetEscapeHTML(false)
			e.Encode(string(want))
			str, err := cat.AppendStructuralTagString(nil, spec)
			if err != nil || !bytes.Equal(str, bytes.TrimSuffix(enc.Bytes(), []byte("\n"))) {
				t.Fatalf("%d: string form %v\n got %s\nwant %s", i, err, str, enc.Bytes())
			}
		}
	}
}
