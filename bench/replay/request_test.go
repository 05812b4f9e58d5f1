package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestRenderer_ACatalogSentAgainRendersAsTheFirstTime sends the same whole-catalog tools
// array (large enough for the reader to compare it rather than scan it) in several
// rounds, then an array that differs only in its last tool and a body that is invalid
// after the array: the remembered array must neither change the tokens or names of a
// round nor vouch for bytes it does not hold.
func TestRenderer_ACatalogSentAgainRendersAsTheFirstTime(t *testing.T) {
	r, err := newRenderer()
	if err != nil {
		t.Fatal(err)
	}
	tool := func(name string) string {
		return `{"type":"function","function":{"name":"` + name + `","description":"` + strings.Repeat("does a thing. ", 8) +
			`","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}`
	}
	var names, elems []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
		elems = append(elems, tool(names[i]))
	}
	catalog := "[" + strings.Join(elems, ",") + "]"
	if len(catalog) < 8<<10 {
		t.Fatalf("the catalog is %d bytes; the test needs one the reader remembers (4 KiB and more)", len(catalog))
	}
	sys := `{"role":"system","content":"be brief"}`
	user := `{"role":"user","content":"hi (tool tool_07)"}`
	body := func(tools string) []byte {
		return []byte(`{"model":"m","messages":[` + sys + `,` + user + `],"tools":` + tools + `,"tool_choice":"auto"}`)
	}
	// The layout the renderer documents, built here from the codec alone.
	enc := func(s string) []int32 {
		ids, _, err := r.codec.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int32, len(ids))
		for i, id := range ids {
			out[i] = int32(id)
		}
		return out
	}
	want := func(elems []string) []int32 {
		w := append([]int32{tokBegin, tokTurn}, enc(sys)...)
		w = append(w, tokToolsOpen)
		for _, e := range elems {
			w = append(w, enc(e)...)
		}
		w = append(w, tokToolsClose, tokEnd, tokTurn)
		w = append(w, enc(user)...)
		return append(w, tokEnd, tokTurn)
	}

	for round := range 3 {
		req, err := r.read.read(body(catalog))
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !slices.Equal(req.names, names) || string(req.toolChoice) != `"auto"` {
			t.Errorf("round %d: names %v, tool_choice %s; want the catalog's 60 names and \"auto\"", round, req.names, req.toolChoice)
		}
		p, err := r.prompt(body(catalog))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p, want(elems)) {
			t.Errorf("round %d: the prompt is not the documented layout of the body's messages and tools", round)
		}
	}

	changed := slices.Clone(elems)
	changed[59] = tool("tool_zz")
	other := "[" + strings.Join(changed, ",") + "]"
	req, err := r.read.read(body(other))
	if err != nil {
		t.Fatal(err)
	}
	if got := req.names[len(req.names)-1]; got != "tool_zz" {
		t.Errorf("an array differing in its last tool read as the remembered one: last name %q", got)
	}
	if p, _ := r.prompt(body(other)); !slices.Equal(p, want(changed)) {
		t.Error("an array differing in its last tool rendered as the remembered one")
	}

	bad := []byte(`{"model":"m","messages":[` + sys + `],"tools":` + catalog + `,}`)
	if _, err := r.prompt(bad); err == nil {
		t.Error("a body invalid after a remembered tools array was read")
	}
}
