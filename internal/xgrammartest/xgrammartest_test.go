package xgrammartest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRun_VerdictsWalksAndErrors: on a tag whose language is known by hand,
// xgrammar accepts exactly the outputs it should, its matcher allows exactly
// the next tokens, and a tag it cannot compile comes back as an error, not a
// failure.
func TestRun_VerdictsWalksAndErrors(t *testing.T) {
	// Free text, then after "<f=" exactly "<f=a>" or "<f=ab>", a JSON
	// object with an integer x, and "</f>".
	tag := []byte(`{"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<f="],"tags":[` +
		`{"type":"tag","begin":"<f=a>","content":{"type":"json_schema","json_schema":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},"end":"</f>"},` +
		`{"type":"tag","begin":"<f=ab>","content":{"type":"json_schema","json_schema":{"type":"object"}},"end":"</f>"}],"at_least_one":false}}`)
	vocab := []string{"</s>", "<f=", "a", "b", "ab", ">", "c", "{"}
	version, results := Run(t, []Case{
		{
			Name: "known",
			Tag:  tag,
			Outputs: []Output{
				{Text: ""}, {Text: "hi <f=a>{\"x\": 1}</f> bye"}, {Text: "<f=ab>{}</f>"},
				{Text: "<f=abc>{}</f>"}, {Text: "<f=a>{}</f>"}, {Text: "<f=a>{\"x\": 1}"}, {Text: "<f=b>{}</f>"},
			},
			Vocab: vocab,
			Stop:  []int{0},
			Walks: [][]int{{1}, {1, 2}, {1, 4}, {1, 6}},
		},
		{Name: "broken", Tag: []byte(`{"type":"structural_tag","format":{"type":"triggered_tags","triggers":["<x"],"tags":[{"type":"tag","begin":"<f=a>","content":{"type":"json_schema","json_schema":{}},"end":"</f>"}]}}`)},
	})
	if version == "" {
		t.Error("no version")
	}
	if diff := cmp.Diff([]bool{true, true, true, false, false, false, false}, results[0].Accepted); diff != "" || results[0].Err != "" {
		t.Errorf("verdicts (-want +got):\n%s (err %q)", diff, results[0].Err)
	}
	want := []Walk{
		{RejectedAt: -1, Allowed: []int{2, 4}}, // "a" or "ab"
		{RejectedAt: -1, Allowed: []int{3, 5}}, // "<f=a": "b" or ">"
		{RejectedAt: -1, Allowed: []int{5}},    // "<f=ab": ">"
		{RejectedAt: 1, Allowed: []int{}},      // "<f=c" is refused at "c"
	}
	if diff := cmp.Diff(want, results[0].Walks); diff != "" {
		t.Errorf("walks (-want +got):\n%s", diff)
	}
	if results[1].Err == "" {
		t.Error("a tag whose begin matches no trigger compiled")
	}
}

// TestCheck_CountsPerKind: Check counts the outputs judged as expected per
// kind, and reports the pinned version.
func TestCheck_CountsPerKind(t *testing.T) {
	rep := Check(t, []Case{{
		Name: "const",
		Tag:  []byte(`{"type":"structural_tag","format":{"type":"const_string","value":"yes"}}`),
		Outputs: []Output{
			{Text: "yes", Accept: true, Kind: "right"},
			{Text: "no", Kind: "wrong"}, {Text: "ye", Kind: "wrong"},
		},
	}})
	if !cmp.Equal(rep.Right, map[string]int{"right": 1, "wrong": 2}) || len(rep.Wrong) != 0 {
		t.Errorf("right %v wrong %v", rep.Right, rep.Wrong)
	}
	// The installed package is the pinned one.
	raw, err := os.ReadFile(filepath.Join("testdata", "node", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pin := pkg.Dependencies["@mlc-ai/web-xgrammar"]; rep.Version != pin {
		t.Errorf("xgrammar %q runs, package.json pins %q", rep.Version, pin)
	}
}
