package oai

import (
	"testing"
)

// sequential applies edits one at a time with Set and Delete: what Edit must equal.
func sequential(t testing.TB, body []byte, edits []Edit) []byte {
	t.Helper()
	for _, e := range edits {
		var err error
		if e.Delete {
			body, err = Delete(body, e.Key)
		} else {
			body, err = Set(body, e.Key, e.Value)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return body
}

func TestEdit_EqualsSetAndDeleteOneByOne(t *testing.T) {
	bodies := []string{
		`{"model":"m","tools":[1,2],"stream":true,"stream_options":{"include_usage":true},"messages":[]}`,
		` { "stream_options" : {} , "model" : "m" } `,
		`{}`,
		`{"a":1}`,
		`{"tools":null,"tools":[3]}`,
	}
	editSets := [][]Edit{
		{{Key: "tools", Value: []byte(`[9]`)}, {Key: "messages", Value: []byte(`[{"role":"user"}]`)}, {Key: "stream", Value: []byte(`false`)}, {Key: "stream_options", Delete: true}},
		{{Key: "stream_options", Delete: true}, {Key: "tool_choice", Value: []byte(`"auto"`)}},
		{{Key: "model", Delete: true}, {Key: "a", Delete: true}},
		{{Key: "new", Value: []byte(`1`)}, {Key: "other", Value: []byte(`"x"`)}},
	}
	for _, b := range bodies {
		for _, edits := range editSets {
			o, err := ParseObject([]byte(b))
			if err != nil {
				t.Fatal(err)
			}
			got := string(o.Edit(edits...))
			want := string(sequential(t, []byte(b), edits))
			if got != want {
				t.Errorf("%s with %v:\n got %s\nwant %s", b, edits, got, want)
			}
			if !Valid([]byte(got)) {
				t.Errorf("%s with %v: invalid JSON %s", b, edits, got)
			}
		}
	}
}

func FuzzEditMany(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":2,"c":3}`), "b", "d", true)
	f.Add([]byte(`{}`), "a", "a2", false)
	f.Fuzz(func(t *testing.T, body []byte, k1, k2 string, del bool) {
		o, err := ParseObject(body)
		if err != nil || k1 == k2 {
			return
		}
		edits := []Edit{{Key: k1, Value: []byte(`[true]`)}, {Key: k2, Delete: del, Value: []byte(`7`)}}
		got := o.Edit(edits...)
		want := sequential(t, body, edits)
		if string(got) != string(want) {
			t.Fatalf("Edit %s\nwant %s", got, want)
		}
	})
}

func TestEdit_ManyEditsAddEachKeyOnce(t *testing.T) {
	var edits []Edit
	body := []byte(`{"k0":0}`)
	for i := range 70 {
		edits = append(edits, Edit{Key: "k" + string(rune('0'+i%10)) + string(rune('a'+i/10)), Value: []byte(`1`)})
	}
	edits = append(edits, Edit{Key: "k0", Value: []byte(`2`)})
	o, err := ParseObject(body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(o.Edit(edits...)), string(sequential(t, body, edits)); got != want {
		t.Errorf("70 edits:\n got %s\nwant %s", got, want)
	}
}
