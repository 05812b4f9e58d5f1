package meta

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestDefinitions_Golden(t *testing.T) {
	golden(t, "definitions.json", Definitions(false))
	golden(t, "definitions_autoload.json", Definitions(true))
}

func TestDefinitions_CompactValidAndNamed(t *testing.T) {
	for _, autoLoad := range []bool{false, true} {
		b := Definitions(autoLoad)
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil {
			t.Fatalf("autoLoad %v: %v", autoLoad, err)
		}
		if !bytes.Equal(compact.Bytes(), b) {
			t.Errorf("autoLoad %v: definitions are not compact JSON", autoLoad)
		}
		var tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(b, &tools); err != nil {
			t.Fatal(err)
		}
		want := []string{SearchTools, LoadTool}
		if autoLoad {
			want = want[:1]
		}
		if len(tools) != len(want) {
			t.Fatalf("autoLoad %v: %d tools, want %d", autoLoad, len(tools), len(want))
		}
		for i, tool := range tools {
			if tool.Type != "function" || tool.Function.Name != want[i] || !IsMeta(tool.Function.Name) {
				t.Errorf("autoLoad %v: tool %d is %s %q, want function %q", autoLoad, i, tool.Type, tool.Function.Name, want[i])
			}
		}
	}
}

func TestDefinitions_CallerOwnsSlice(t *testing.T) {
	b := Definitions(false)
	b[0] = 'x'
	if Definitions(false)[0] != '[' {
		t.Fatal("changing a returned slice changed the definitions")
	}
}

func TestIsMeta(t *testing.T) {
	for name, want := range map[string]bool{"search_tools": true, "load_tool": true, "Search_Tools": false, "load_tools": false, "": false} {
		if IsMeta(name) != want {
			t.Errorf("IsMeta(%q) = %v", name, !want)
		}
	}
}
