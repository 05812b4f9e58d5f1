package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/policy"
)

func tool(name, desc string) toolsearch.Tool {
	return toolsearch.Tool{Name: name, Description: desc, Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Origin: name}
}

func names(c *Catalog) []string {
	var out []string
	for _, t := range c.Index().Catalog().All() {
		out = append(out, t.Name)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// The resolution order: a later source's tool with an earlier id replaces it wholesale,
// and the replacement is logged.
func TestNew_LaterSourceReplacesWholesale(t *testing.T) {
	var logs bytes.Buffer
	spec := Spec{Name: "p", Log: slog.New(slog.NewTextHandler(&logs, nil))}
	file := toolsearch.Tool{Name: "a_x", Description: "from the file", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`), Keywords: []string{"kw"}}
	mcp := toolsearch.Tool{Name: "a_x", Description: "from the server"}
	c, err := New(spec, []Source{
		{Kind: "file", Name: "f.json", Tools: []toolsearch.Tool{file, tool("b", "b")}},
		{Kind: "inline", Name: "inline", Tools: []toolsearch.Tool{tool("c", "c")}},
		{Kind: "mcp", Name: "a", Tools: []toolsearch.Tool{mcp}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.Index().Catalog().Lookup("a_x")
	if got.Description != "from the server" || got.Parameters != nil || got.Keywords != nil {
		t.Errorf("a_x = %+v; want the server's tool whole (no schema, no keywords of the file's)", got)
	}
	if !strings.Contains(logs.String(), "tool replaced by a later source") || !strings.Contains(logs.String(), "was=\"file f.json\"") {
		t.Errorf("replacement not logged: %s", logs.String())
	}
	if want := []string{"a_x", "b", "c"}; !slices.Equal(names(c), want) {
		t.Errorf("order %v, want %v (sorted)", names(c), want)
	}
}

func TestNew_Allowlists(t *testing.T) {
	src := []Source{{Kind: "inline", Tools: []toolsearch.Tool{tool("git_commit", ""), tool("git_push", ""), tool("jira_create", "")}}}
	for _, tc := range []struct {
		name  string
		allow []string
		want  []string
	}{
		{"missing keeps all", nil, []string{"git_commit", "git_push", "jira_create"}},
		{"empty keeps none", []string{}, nil},
		{"globs", []string{"git_*"}, []string{"git_commit", "git_push"}},
		{"exact", []string{"jira_create", "nope"}, []string{"jira_create"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Spec{Name: "p", Allow: tc.allow}, src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names(c), tc.want) {
				t.Errorf("got %v, want %v", names(c), tc.want)
			}
		})
	}
	if _, err := New(Spec{Allow: []string{"[x"}}, src); err == nil {
		t.Error("a bad glob was accepted")
	}
}

func TestNew_OverridesChangeWhatTheModelSees(t *testing.T) {
	c, err := New(Spec{Name: "p", Overrides: []Override{
		{Tool: "a", Fields: Fields{Description: ptr("Search the support knowledge base.")}},
		{Tool: "b", Fields: Fields{Enabled: ptr(false)}},
		{Tool: "c", Fields: Fields{Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)}},
		{Tool: "zz"}, // names nothing: logged, not an error
	}}, []Source{{Tools: []toolsearch.Tool{tool("a", "generic"), tool("b", "b"), tool("c", "c")}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "c"}; !slices.Equal(names(c), want) {
		t.Fatalf("tools %v, want %v", names(c), want)
	}
	render := string(c.Index().Catalog().Render())
	if !strings.Contains(render, `"description":"Search the support knowledge base."`) || strings.Contains(render, "generic") {
		t.Errorf("description not overridden: %s", render)
	}
	if !strings.Contains(render, `"parameters":{"type":"object","properties":{"id":{"type":"integer"}}}`) {
		t.Errorf("parameters not overridden byte for byte: %s", render)
	}
	if _, err := New(Spec{Overrides: []Override{{Tool: "a", Fields: Fields{Parameters: json.RawMessage(`[1]`)}}}}, nil); err == nil {
		t.Error("parameters that are not an object were accepted")
	}
}

func req(h map[string]string, metadata string) policy.Request {
	hh := http.Header{}
	for k, v := range h {
		hh.Set(k, v)
	}
	var md json.RawMessage
	if metadata != "" {
		md = json.RawMessage(metadata)
	}
	return policy.NewRequest("p", hh, md, nil)
}

func TestView_VariantsByRequestContext(t *testing.T) {
	pro := policy.Cond{Field: "metadata.plan", Op: policy.Equals, Values: []string{"pro"}}
	eu := policy.Cond{Field: "header.x-region", Op: policy.Prefix, Values: []string{"eu-"}}
	c, err := New(Spec{Name: "p", Overrides: []Override{
		{Tool: "export", Variants: []Variant{
			{When: pro, Fields: Fields{Description: ptr("Export up to 1M rows.")}},
			{When: policy.Cond{Not: &pro}, Fields: Fields{Description: ptr("Export up to 1k rows.")}},
		}},
		{Tool: "premium", Variants: []Variant{{When: policy.Cond{Not: &pro}, Fields: Fields{Enabled: ptr(false)}}}},
		{Tool: "store", Variants: []Variant{{When: eu, Fields: Fields{Description: ptr("Store in the EU.")}}}},
	}}, []Source{{Tools: []toolsearch.Tool{tool("export", "Export rows."), tool("premium", "p"), tool("store", "Store.")}}})
	if err != nil {
		t.Fatal(err)
	}
	view := func(r policy.Request) *toolsearch.Catalog {
		t.Helper()
		v, err := c.View(r)
		if err != nil {
			t.Fatal(err)
		}
		return v.Index.Catalog()
	}
	proCat := view(req(nil, `{"plan":"pro"}`))
	freeCat := view(req(nil, `{"plan":"free"}`))
	none := view(req(nil, ""))
	euCat := view(req(map[string]string{"X-Region": "eu-west"}, `{"plan":"pro"}`))
	bad := view(req(nil, `{"plan":1}`)) // metadata that is not strings: no rule holds

	desc := func(cat *toolsearch.Catalog, name string) string {
		tl, ok := cat.Lookup(name)
		if !ok {
			return "(absent)"
		}
		return tl.Description
	}
	for _, tc := range []struct {
		cat                      *toolsearch.Catalog
		export, premium, storeDs string
	}{
		{proCat, "Export up to 1M rows.", "p", "Store."},
		{freeCat, "Export up to 1k rows.", "(absent)", "Store."},
		{none, "Export up to 1k rows.", "(absent)", "Store."},
		{euCat, "Export up to 1M rows.", "p", "Store in the EU."},
		{bad, "Export rows.", "p", "Store."},
	} {
		if g := desc(tc.cat, "export"); g != tc.export {
			t.Errorf("export: %q, want %q", g, tc.export)
		}
		if g := desc(tc.cat, "premium"); g != tc.premium {
			t.Errorf("premium: %q, want %q", g, tc.premium)
		}
		if g := desc(tc.cat, "store"); g != tc.storeDs {
			t.Errorf("store: %q, want %q", g, tc.storeDs)
		}
	}
	// Each variant is its own catalog version; the same choice is the same catalog.
	versions := map[string]bool{}
	for _, cat := range []*toolsearch.Catalog{proCat, freeCat, euCat, bad} {
		versions[cat.Version()] = true
	}
	if len(versions) != 4 {
		t.Errorf("%d versions for 4 distinct variant choices", len(versions))
	}
	if freeCat != none {
		t.Error("the same variant choice built a second catalog")
	}
	if bad != c.Index().Catalog() {
		t.Error("no variant chosen, yet not the base catalog")
	}
}

// The same sources render the same bytes every time, whatever order the server lists
// its tools in.
func TestNew_ByteStable(t *testing.T) {
	var tools []toolsearch.Tool
	for i := range 50 {
		tools = append(tools, tool(fmt.Sprintf("t%02d", i), fmt.Sprintf("tool %d", i)))
	}
	a, _ := New(Spec{}, []Source{{Tools: tools}})
	rev := slices.Clone(tools)
	slices.Reverse(rev)
	b, _ := New(Spec{}, []Source{{Tools: rev}})
	if !bytes.Equal(a.Index().Catalog().Render(), b.Index().Catalog().Render()) {
		t.Error("two catalogs of the same tools render differently")
	}
}

// prefixOf says whether old's rendered tools are a prefix of new's: the engine's cached
// tokens for the catalog stay valid.
func prefixOf(old, new []byte) bool {
	return bytes.HasPrefix(new, bytes.TrimSuffix(old, []byte("]")))
}

func TestUpdate_AppendsMasksAndKeepsThePrefix(t *testing.T) {
	c, err := New(Spec{Name: "p"}, []Source{{Kind: "mcp", Name: "s", Tools: []toolsearch.Tool{tool("s_b", "b"), tool("s_d", "d")}}})
	if err != nil {
		t.Fatal(err)
	}
	before := c.Index().Catalog().Render()
	// The server adds a (sorting before b) and c, and drops d.
	ch, err := c.Update([]Source{{Kind: "mcp", Name: "s", Tools: []toolsearch.Tool{tool("s_c", "c"), tool("s_a", "a"), tool("s_b", "b")}}})
	if err != nil {
		t.Fatal(err)
	}
	after := c.Index().Catalog().Render()
	if !prefixOf(before, after) || ch.Broke {
		t.Fatalf("the prefix moved (broke=%v):\n%s\n%s", ch.Broke, before, after)
	}
	if want := []string{"s_b", "s_d", "s_a", "s_c"}; !slices.Equal(names(c), want) {
		t.Errorf("order %v, want %v: old in place, new appended", names(c), want)
	}
	if !slices.Equal(ch.Added, []string{"s_a", "s_c"}) || !slices.Equal(ch.Removed, []string{"s_d"}) {
		t.Errorf("change %+v", ch)
	}
	if !c.Removed()["s_d"] || c.Masked() != 1 {
		t.Errorf("s_d not masked: %v", c.Removed())
	}
	// Back again: it is unmasked where it was.
	ch, _ = c.Update([]Source{{Tools: []toolsearch.Tool{tool("s_a", "a"), tool("s_b", "b"), tool("s_c", "c"), tool("s_d", "d")}}})
	if c.Masked() != 0 || ch.Broke || len(ch.Added) != 0 {
		t.Errorf("returning tool: masked %d, change %+v", c.Masked(), ch)
	}
	// A tool changed in place moves the prefix, and says so.
	mid := c.Index().Catalog().Render()
	ch, _ = c.Update([]Source{{Tools: []toolsearch.Tool{tool("s_a", "a"), tool("s_b", "b, reworded"), tool("s_c", "c")}}})
	if !ch.Broke || !slices.Equal(ch.Replaced, []string{"s_b"}) || prefixOf(mid, c.Index().Catalog().Render()) {
		t.Errorf("in-place change: %+v", ch)
	}
	// Compact drops the masked tools: a break.
	ch, _ = c.Compact()
	if !ch.Broke || c.Masked() != 0 || slices.Contains(names(c), "s_d") {
		t.Errorf("compact: %+v, tools %v", ch, names(c))
	}
	if ch, _ := c.Compact(); ch.Broke {
		t.Error("compacting nothing broke the prefix")
	}
}

func TestStatic(t *testing.T) {
	cat, _ := toolsearch.New([]toolsearch.Tool{tool("a", "a")})
	ix := toolsearch.NewIndex(cat, toolsearch.Options{})
	c := Static(ix)
	v, err := c.View(req(nil, ""))
	if err != nil || v.Index != ix || c.Index() != ix || c.HasVariants() {
		t.Errorf("static view: %v %v", v, err)
	}
}
