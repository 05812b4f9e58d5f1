package sglang

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/backends/openaicompat"
)

var update = flag.Bool("update", false, "rewrite golden files")

const tools = `[` +
	`{"type":"function","function":{"name":"search_tools","parameters":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}}},` +
	`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},` +
	`{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}]`

func request(extra string) string {
	return `{"model":"qwen","messages":[{"role":"user","content":"hi"}],"tools":` + tools + extra + `}`
}

// TestConstrain_GoldenBodies: the requests SGLang receives, reviewed against SGLang's
// "Structured Outputs" docs (OpenAI compatible API → Structural Tag, the "XGrammar
// latest structural tag format": response_format {"type":"structural_tag","format":
// {"type":"triggered_tags","triggers","tags":[{"begin","content":{"type":"json_schema",
// "json_schema"},"end"}],"at_least_one"}}, an object), its protocol.py
// (ChatCompletionRequest.response_format, tool_choice "auto"|"required"|"none"|named),
// and xgrammar's structural tag tutorial.
func TestConstrain_GoldenBodies(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		body    string
		allowed []string
		// in and out: names the tag must and must not hold; least: at_least_one.
		in, out []string
		least   bool
	}{
		{"auto_two_allowed", request(""), []string{"search_tools", "get_weather"},
			[]string{"search_tools", "get_weather"}, []string{"get_time"}, false},
		{"required_one_allowed", request(`,"tool_choice":"required"`), []string{"get_weather"},
			[]string{"get_weather"}, []string{"search_tools", "get_time"}, true},
		{"named", request(`,"tool_choice":{"type":"function","function":{"name":"get_time"}},"response_format":{"type":"text"}`),
			[]string{"search_tools", "get_time"}, []string{"get_time"}, []string{"search_tools", "get_weather"}, true},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, outcome, err := Constrain([]byte(tc.body), tc.allowed)
			if err != nil || outcome != Constrained {
				t.Fatalf("outcome %v err %v", outcome, err)
			}
			golden := filepath.Join("testdata", tc.golden+".json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("body changed:\n got %s\nwant %s", got, want)
			}
			var body struct {
				ToolChoice     string `json:"tool_choice"`
				ResponseFormat struct {
					Type   string `json:"type"`
					Format struct {
						Type     string   `json:"type"`
						Triggers []string `json:"triggers"`
						Tags     []struct {
							Begin   string `json:"begin"`
							Content struct {
								Type       string          `json:"type"`
								JSONSchema json.RawMessage `json:"json_schema"`
							} `json:"content"`
							End string `json:"end"`
						} `json:"tags"`
						AtLeastOne bool `json:"at_least_one"`
					} `json:"format"`
				} `json:"response_format"`
				Tools []oai.Tool `json:"tools"`
			}
			if err := json.Unmarshal(got, &body); err != nil {
				t.Fatal(err)
			}
			f := body.ResponseFormat.Format
			if body.ToolChoice != "auto" || body.ResponseFormat.Type != "structural_tag" || f.Type != "triggered_tags" ||
				len(f.Triggers) != 1 || f.Triggers[0] != "<tool_call>" || f.AtLeastOne != tc.least || len(f.Tags) != len(tc.in) {
				t.Errorf("tool_choice %q, response_format %+v", body.ToolChoice, body.ResponseFormat)
			}
			tags, _ := json.Marshal(f.Tags)
			for _, n := range tc.in {
				if !strings.Contains(string(tags), `\"name\": \"`+n+`\"`) {
					t.Errorf("no tag for %s", n)
				}
			}
			for _, n := range tc.out {
				if strings.Contains(string(tags), `\"`+n+`\"`) {
					t.Errorf("a tag for %s", n)
				}
			}
			for _, tl := range body.Tools {
				if tl.Function.Strict != nil {
					t.Errorf("tool %s marked strict", tl.Function.Name)
				}
			}
			// Every byte through the tools array is the client's: the prompt does not move.
			prefix := tc.body[:strings.Index(tc.body, tools)+len(tools)]
			if len(body.Tools) != 3 || !strings.HasPrefix(string(got), prefix) {
				t.Error("tools changed")
			}
		})
	}
}

// TestConstrain_AClientResponseFormatIsKeptAndNotConstrained: a client's response_format
// the tag cannot carry (its own structural tag) goes alone; json_schema and json_object
// go inside the tag (TestConstrain_AClientSchemaJoinsTheTag).
func TestConstrain_AClientResponseFormatIsKeptAndNotConstrained(t *testing.T) {
	for _, rf := range []string{
		`{"type":"structural_tag","structures":[],"triggers":[]}`,
	} {
		body := request(`,"response_format":` + rf)
		got, outcome, err := Constrain([]byte(body), []string{"get_weather"})
		if err != nil || outcome != Unconstrained || string(got) != body {
			t.Errorf("%s: outcome %v err %v body %s", rf, outcome, err, got)
		}
	}
}

func TestConstrain_LeavesRequestsWithoutToolsOrWithNoneAlone(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[]}`,
		`{"model":"m","messages":[],"tools":[]}`,
		request(`,"tool_choice":"none"`),
	} {
		got, outcome, err := Constrain([]byte(body), []string{"get_weather"})
		if err != nil || outcome != Untouched || string(got) != body {
			t.Errorf("%s: outcome %v err %v", body, outcome, err)
		}
	}
}

func TestConstrain_ANamedToolThatMayNotBeCalledIs400(t *testing.T) {
	_, _, err := Constrain([]byte(request(`,"tool_choice":{"type":"function","function":{"name":"get_time"}}`)), []string{"get_weather"})
	var re *oai.RequestError
	if !errors.As(err, &re) || re.Param != "tool_choice" {
		t.Errorf("err %v", err)
	}
}

func TestConstrain_NothingAllowedInAutoIsUnconstrained(t *testing.T) {
	body := request("")
	got, outcome, err := Constrain([]byte(body), []string{})
	if err != nil || outcome != Unconstrained || string(got) != body {
		t.Errorf("outcome %v err %v body %s", outcome, err, got)
	}
}

func TestBackend_StrategySaysWhatHappened(t *testing.T) {
	var got []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":8}}}`)
	}))
	defer up.Close()
	b, err := New(openaicompat.Options{Name: "s", BaseURL: up.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if !b.ConstrainsTools() {
		t.Error("not a constrainer")
	}
	for _, tc := range []struct {
		name     string
		body     string
		allowed  []string
		strategy string
		tagged   bool
	}{
		{"constrained", request(""), []string{"get_time"}, "mask", true},
		{"client response_format", request(`,"response_format":{"type":"json_object"}`), []string{"get_time"}, "mask", true},
		// the client's own tag, sent as it came (it names structural_tag itself)
		{"client structural tag", request(`,"response_format":{"type":"structural_tag","structures":[],"triggers":[]}`), []string{"get_time"}, "validate", true},
		{"not managed by the gateway", request(""), nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := b.ChatCompletion(context.Background(), &backends.Request{Body: []byte(tc.body), Allowed: tc.allowed})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Strategy != tc.strategy || strings.Contains(string(got), `"structural_tag"`) != tc.tagged {
				t.Errorf("strategy %q, upstream got %s", resp.Strategy, got)
			}
		})
	}
}

// TestConstrain_AClientSchemaJoinsTheTag: a client's response_format json_schema or
// json_object becomes part of the tag in response_format: one of the allowed calls or
// the answer where calls are optional (the schema's bytes as sent), the calls alone
// where one is required.
func TestConstrain_AClientSchemaJoinsTheTag(t *testing.T) {
	for _, c := range []struct{ rf, choice, want string }{
		{`{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"x":{"type":"integer"}}}}}`, `"auto"`,
			`{"type":"json_schema","json_schema":{"type":"object","properties":{"x":{"type":"integer"}}}}]}}`},
		{`{"type":"json_object"}`, `"auto"`, `{"type":"json_schema","json_schema":{"type":"object"}}]}}`},
		{`{"type":"json_object"}`, `"required"`, `"at_least_one":true}}`},
	} {
		body := request(`,"tool_choice":` + c.choice + `,"response_format":` + c.rf)
		got, outcome, err := Constrain([]byte(body), []string{"get_weather"})
		var b struct {
			RF json.RawMessage `json:"response_format"`
		}
		if err != nil || outcome != Constrained || json.Unmarshal(got, &b) != nil || !strings.HasSuffix(string(b.RF), c.want) ||
			strings.Contains(string(b.RF), `"get_time"`) || (c.choice == `"auto"`) != strings.Contains(string(b.RF), `{"type":"or"`) {
			t.Errorf("%s %s: outcome %v err %v response_format %s", c.rf, c.choice, outcome, err, b.RF)
		}
	}
}
