package toolsearch

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTools_ErrorsNameFileAndIndex(t *testing.T) {
	cases := []struct{ data, want string }{
		{`{}`, "tools/a.json: want a JSON array"},
		{`[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b c"}}]`, `tools/a.json tool 1: function.name "b c": byte 1`},
		{`[{"type":"function","function":{"name":"a"},"keyword":["x"]}]`, `tools/a.json tool 0: json: unknown field "keyword"`},
		{`[{"type":"custom","function":{"name":"a"}}]`, `tools/a.json tool 0: type "custom" is not supported`},
		{`[{"type":"function"}]`, "tools/a.json tool 0: function is missing"},
		{`[{"type":"function","function":{"name":""}}]`, "tools/a.json tool 0: function.name is empty"},
		{`[{"type":"function","function":{"name":"a","parameters":[1]}}]`, "tools/a.json tool 0: function \"a\": parameters must be a JSON object"},
	}
	for _, c := range cases {
		_, err := ParseTools([]byte(c.data), "tools/a.json")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTools(%s) = %v, want an error containing %q", c.data, err, c.want)
		}
	}
}

func TestParseClientTools_NamesTheRequestParameter(t *testing.T) {
	_, err := ParseClientTools([]byte(`[{"type":"function","function":{"name":"ok","extra":1}},{"type":"function","function":{"name":"a","parameters":"x"}}]`))
	if err == nil || !strings.HasPrefix(err.Error(), "tools[1]: ") {
		t.Fatalf("err = %v, want one starting with tools[1]", err)
	}
}

func TestParse_KeepsParametersBytesVerbatim(t *testing.T) {
	params := `{ "type" : "object",
	  "properties": {"z": {"type":"string"}, "a": {"type":"integer"}} }`
	tools := mustClient(t, `[{"type":"function","function":{"name":"f","parameters":`+params+`}}]`)
	if string(tools[0].Parameters) != params {
		t.Fatalf("parameters = %s, want the bytes as sent", tools[0].Parameters)
	}
	c, _ := New(nil)
	r, err := c.WithClient(tools)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.Render()); !strings.Contains(got, `"parameters":`+params+`}}`) {
		t.Errorf("render does not carry the bytes verbatim: %s", got)
	}
}

func TestNew_SortsByNameAndRejectsDuplicates(t *testing.T) {
	c, err := New([]Tool{{Name: "b"}, {Name: "a"}, {Name: "c"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tool := range c.All() {
		got = append(got, tool.Name)
	}
	if !cmp.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("order = %v", got)
	}
	_, err = New([]Tool{{Name: "x", Origin: "a.json tool 0"}, {Name: "x", Origin: "b.json tool 3"}})
	if err == nil || !strings.Contains(err.Error(), "a.json tool 0 and b.json tool 3") {
		t.Errorf("duplicate: err = %v", err)
	}
}

func TestWithClient_ClientWinsAndProfileIsUntouched(t *testing.T) {
	profile := corpus(t)
	before := profile.Render()
	client := mustClient(t, `[
		{"type":"function","function":{"name":"zeta_tool","description":"Client tool."}},
		{"type":"function","function":{"name":"read_file","description":"The client's own reader."}}]`)
	r, err := profile.WithClient(client)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != profile.Len()+1 {
		t.Errorf("len = %d, want %d", r.Len(), profile.Len()+1)
	}
	got, _ := r.Lookup("read_file")
	if got.Description != "The client's own reader." || got.Source != FromClient {
		t.Errorf("read_file = %+v, want the client's", got)
	}
	// Client tools come last, in request order.
	n := r.Len()
	if r.Tool(n-2).Name != "zeta_tool" || r.Tool(n-1).Name != "read_file" {
		t.Errorf("tail = %s, %s", r.Tool(n-2).Name, r.Tool(n-1).Name)
	}
	for i, tool := range r.All() {
		if j, ok := r.index(tool.Name); !ok || j != i {
			t.Errorf("index(%s) = %d, %v; want %d", tool.Name, j, ok, i)
		}
	}
	if p, _ := profile.Lookup("read_file"); p.Source != FromProfile {
		t.Error("the profile catalog sees the client's tool")
	}
	if _, ok := profile.Lookup("zeta_tool"); ok {
		t.Error("the profile catalog sees a client tool")
	}
	if !cmp.Equal(before, profile.Render()) {
		t.Error("the profile render changed")
	}
	if _, err := profile.WithClient(mustClient(t, `[{"type":"function","function":{"name":"x"}},{"type":"function","function":{"name":"x"}}]`)); err == nil || !strings.Contains(err.Error(), "tools[0] and tools[1]") {
		t.Errorf("duplicate client tools: err = %v", err)
	}
}

func TestVersion_IsTheHashOfTheRender(t *testing.T) {
	profile := corpus(t)
	check := func(c *Catalog) {
		t.Helper()
		sum := sha256.Sum256(c.Render())
		if got, want := c.Version(), hex.EncodeToString(sum[:]); got != want {
			t.Errorf("Version = %s, want %s", got, want)
		}
	}
	check(profile)
	plain, _ := profile.WithClient(mustClient(t, `[{"type":"function","function":{"name":"zz"}},{"type":"function","function":{"name":"zy"}}]`))
	check(plain) // the resumed-hash path
	over, _ := profile.WithClient(mustClient(t, `[{"type":"function","function":{"name":"read_file"}}]`))
	check(over)
	empty, _ := New(nil)
	check(empty)
	only, _ := empty.WithClient(mustClient(t, `[{"type":"function","function":{"name":"a"}}]`))
	check(only)
	if plain.Version() == profile.Version() || over.Version() == profile.Version() {
		t.Error("a request catalog shares its profile's version")
	}
}

func TestReadFiles_ReadsInOrderAndNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.json")
	b := filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(`[{"type":"function","function":{"name":"one"}}]`), 0o644)
	os.WriteFile(b, []byte(`[{"type":"function","function":{"name":"two"}},{"type":"function","function":{"name":"bad name"}}]`), 0o644)
	if _, err := ReadFiles(a, b); err == nil || !strings.Contains(err.Error(), b+" tool 1") {
		t.Errorf("err = %v, want it to name %s tool 1", err, b)
	}
	tools, err := ReadFiles(a)
	if err != nil || len(tools) != 1 || tools[0].Origin != a+" tool 0" {
		t.Errorf("tools = %+v, %v", tools, err)
	}
}
