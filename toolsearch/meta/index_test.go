package meta

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestIndexDefinitions_TheIndexEndsTheLoadingToolsDescription(t *testing.T) {
	index := "## git\n- git_commit: Record \"changes\" <now> & then.\n"
	for _, autoLoad := range []bool{false, true} {
		raw := IndexDefinitions(autoLoad, index)
		var defs []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &defs); err != nil {
			t.Fatalf("autoLoad %v: not JSON: %v\n%s", autoLoad, err, raw)
		}
		var plain []struct {
			Function struct {
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		_ = json.Unmarshal(Definitions(autoLoad), &plain)
		if len(defs) != len(plain) {
			t.Fatalf("autoLoad %v: %d tools, want %d", autoLoad, len(defs), len(plain))
		}
		last := len(defs) - 1
		want := plain[last].Function.Description + "\n\nThe tools you can load, by namespace (name: what it does):\n" + index
		if defs[last].Function.Description != want {
			t.Errorf("autoLoad %v: description\n%q\nwant\n%q", autoLoad, defs[last].Function.Description, want)
		}
		if string(defs[last].Function.Parameters) != string(plain[last].Function.Parameters) {
			t.Errorf("autoLoad %v: the parameters changed", autoLoad)
		}
		if strings.Contains(string(raw), `\u003c`) {
			t.Errorf("autoLoad %v: '<' escaped for a browser: %s", autoLoad, raw)
		}
		if string(IndexDefinitions(autoLoad, index)) != string(raw) {
			t.Errorf("autoLoad %v: two renders differ", autoLoad)
		}
	}
}

func TestLoad_CarriesWhatDefineGivesOnlyWhenItLoads(t *testing.T) {
	env := testEnv(t)
	var asked [][]string
	env.Define = func(names []string) json.RawMessage {
		asked = append(asked, names)
		if len(names) == 0 {
			return nil
		}
		return json.RawMessage(`[{"type":"function","function":{"name":"` + names[0] + `"}}]`)
	}
	out := Execute(context.Background(), Call{Name: LoadTool, Arguments: `{"toolName":"github_create_issue"}`}, env)
	var c struct {
		Message string          `json:"message"`
		Tools   json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out.Content), &c); err != nil {
		t.Fatal(err)
	}
	if string(c.Tools) != `[{"type":"function","function":{"name":"github_create_issue"}}]` || !strings.HasSuffix(c.Message, definitionsNote) {
		t.Errorf("load result %s, want the definition and the note", out.Content)
	}
	env.Loaded = func(string) bool { return true }
	out = Execute(context.Background(), Call{Name: LoadTool, Arguments: `{"toolName":"github_create_issue"}`}, env)
	if strings.Contains(out.Content, `"tools"`) || len(asked) != 2 || len(asked[1]) != 0 {
		t.Errorf("a load of a loaded tool: %s (Define asked %v), want nothing added", out.Content, asked)
	}
}

func TestLoaded_TheGatewaysOwnLoad(t *testing.T) {
	defs := json.RawMessage(`[{"type":"function","function":{"name":"a_b"}}]`)
	var c struct {
		Success  bool            `json:"success"`
		ToolName string          `json:"toolName"`
		Tools    json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(Loaded([]string{"a_b"}, defs)), &c); err != nil || !c.Success || c.ToolName != "a_b" || string(c.Tools) != string(defs) {
		t.Errorf("Loaded: %+v %v", c, err)
	}
}
