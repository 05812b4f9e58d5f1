package oai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSet_ReplacesInPlaceAndAppendsMissing(t *testing.T) {
	tests := []struct {
		name, body, key, value, want string
	}{
		{"replace keeps spacing", `{ "model" : "a" , "x":1 }`, "model", `"b"`, `{ "model" : "b" , "x":1 }`},
		{"append after last member", `{"a":1 }`, "b", `true`, `{"a":1,"b":true }`},
		{"append to empty", `{ }`, "b", `2`, `{ "b":2}`},
		{"replace nested object", `{"s":{"k":[1,{"}":"]"}]},"t":0}`, "s", `{}`, `{"s":{},"t":0}`},
		{"escaped key", `{"m\u006fdel":"a"}`, "model", `"b"`, `{"m\u006fdel":"b"}`},
		{"repeated key: all replaced", `{"a":1,"a":2}`, "a", `3`, `{"a":3,"a":3}`},
		{"string with escapes", `{"a":"x\"}y","b":1}`, "b", `2`, `{"a":"x\"}y","b":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Set([]byte(tt.body), tt.key, []byte(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDelete_RemovesMemberAndItsComma(t *testing.T) {
	tests := []struct{ name, body, key, want string }{
		{"middle", `{"a":1, "b":2, "c":3}`, "b", `{"a":1, "c":3}`},
		{"first", `{"a":1, "b":2}`, "a", `{"b":2}`},
		{"last", `{"a":1,"b":null}`, "b", `{"a":1}`},
		{"only", `{"a":1}`, "a", `{}`},
		{"absent", `{"a":1}`, "z", `{"a":1}`},
		{"first two", `{"a":1,"a":2,"b":3}`, "a", `{"b":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Delete([]byte(tt.body), tt.key)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// FuzzEdit holds the editing contract on arbitrary valid JSON objects: the result is valid
// JSON, decodes to the input with only that key changed, and bytes outside the edited
// member are untouched (the result's length changes by exactly the edit).
func FuzzEdit(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{ "model":"x" , "b" : [1,{"c":"}"}] }`, `{"a":"\"","b":{}}`, `{"a":1,"a":2}`} {
		f.Add(s, "a", "model")
	}
	f.Fuzz(func(t *testing.T, body, key, other string) {
		if !utf8.ValidString(key) || !utf8.ValidString(other) {
			return // JSON cannot name such a key; callers use fixed ASCII keys
		}
		var before map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &before) != nil || before == nil {
			return
		}
		got, err := Set([]byte(body), key, []byte(`"NEW"`))
		if err != nil {
			t.Fatalf("Set on valid object %q: %v", body, err)
		}
		var after map[string]json.RawMessage
		if err := json.Unmarshal(got, &after); err != nil {
			t.Fatalf("Set made invalid JSON: %q → %q", body, got)
		}
		if string(after[key]) != `"NEW"` {
			t.Fatalf("Set(%q) on %q: value %s", key, body, after[key])
		}
		for k, v := range before {
			if k != key && string(after[k]) != string(v) {
				t.Fatalf("Set(%q) changed %q: %s → %s", key, k, v, after[k])
			}
		}
		if v, ok := Get(got, key); !ok || string(v) != `"NEW"` {
			t.Fatalf("Get after Set: %s %v", v, ok)
		}
		// SetEnd, in spare capacity, gives Set's result less what followed the object.
		buf := append(make([]byte, 0, len(body)+len(key)+32), body...)
		o, _ := ParseObject(buf)
		if end := o.SetEnd(key, []byte(`"NEW"`)); string(end) != string(got) {
			t.Fatalf("SetEnd(%q) on %q = %q, Set gives %q", key, body, end, got)
		}
		del, err := Delete([]byte(body), other)
		if err != nil {
			t.Fatalf("Delete: %v", err)
		}
		var afterDel map[string]json.RawMessage
		if err := json.Unmarshal(del, &afterDel); err != nil {
			t.Fatalf("Delete made invalid JSON: %q → %q", body, del)
		}
		if _, ok := afterDel[other]; ok {
			t.Fatalf("Delete(%q) left it in %q", other, del)
		}
		for k, v := range before {
			if k != other && string(afterDel[k]) != string(v) {
				t.Fatalf("Delete(%q) changed %q", other, k)
			}
		}
	})
}

func TestObjectLen(t *testing.T) {
	for _, tc := range []struct {
		body string
		want int
		ok   bool
	}{
		{`{"tools":[]}`, 0, true}, {`{"tools": [ ] }`, 0, true}, {`{"tools":[{}]}`, 1, true},
		{`{"tools":[{"a":[1,2,{"b":"],}"}]},{}],"x":[1,2,3]}`, 2, true},
		{`{"x":[[1,2,3]],"tools":[[],[[]],[1]]}`, 3, true},
		{`{"tools":{}}`, 0, false}, {`{"tools":null}`, 0, false}, {`{}`, 0, false},
		{`{"tools":[1],"tools":[1,2]}`, 2, true}, // the last, as Get reads it
	} {
		o, err := ParseObject([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := o.Len("tools"); n != tc.want || ok != tc.ok {
			t.Errorf("Len(tools) of %s = %d, %v; want %d, %v", tc.body, n, ok, tc.want, tc.ok)
		}
	}
}

// FuzzObjectLen: for any object the scan accepts, the count of each array member is the
// decoder's.
func FuzzObjectLen(f *testing.F) {
	for _, s := range []string{`{"tools":[]}`, `{"tools":[{}]}`, `{"a":[{"a":"\\"}],"b":[1,[2,3]]}`, `{"t":[{"a":"]"},{"b":["{"]}]}`, `{"t":["a,b"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, err := ParseObject(raw)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			t.Fatalf("the scan accepted %q, the decoder did not", raw)
		}
		for k, v := range m {
			var arr []json.RawMessage
			n, ok := o.Len(k)
			if json.Unmarshal(v, &arr) == nil {
				if !ok || n != len(arr) {
					t.Errorf("Len(%q) of %q = %d, %v; the decoder finds %d", k, raw, n, ok, len(arr))
				}
			} else if ok {
				t.Errorf("Len(%q) of %q = %d for a value that is no array", k, raw, n)
			}
		}
	})
}

// FuzzMember: Member finds what ParseObject and Get find, and refuses what ParseObject
// refuses.
func FuzzMember(f *testing.F) {
	for _, s := range []string{`{"role":"user"}`, `{"role":1,"role":"x"}`, `{"a":{"role":2}}`, `[]`, `{"role":"u"} x`, `{"r\u006fle":"u"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		val, found, isObject := Member(b, "role")
		o, err := ParseObject(b)
		if isObject != (err == nil) {
			t.Fatalf("%q: Member says object %v, ParseObject err %v", b, isObject, err)
		}
		if err != nil {
			return
		}
		want, ok := o.Get("role")
		if found != ok || !bytes.Equal(val, want) {
			t.Fatalf("%q: Member %q %v, Get %q %v", b, val, found, want, ok)
		}
	})
}

// SetEnd gives what Set gives, in the object's own spare capacity, and copies only when
// the key is there already, the capacity is short or too much would move.
func TestSetEnd_AddsInPlaceOrCopies(t *testing.T) {
	tests := []struct {
		body, key, value string
		slack            int
		inPlace          bool
		want             string
	}{
		{`{"a":1}`, "b", `true`, 16, true, `{"a":1,"b":true}`},
		{"{\"a\":1 }\n", "b", `true`, 16, true, "{\"a\":1,\"b\":true }\n"},
		{`{}`, "b", `{"x":1}`, 16, true, `{"b":{"x":1}}`},
		{` { } `, "b", `2`, 16, true, ` { "b":2} `},
		{`{"a":1}` + strings.Repeat(" ", 40), "b", `2`, 64, false, `{"a":1,"b":2}` + strings.Repeat(" ", 40)},
		{`{"a":1}`, "b", `true`, 2, false, `{"a":1,"b":true}`},
		{`{"b":1,"c":2}`, "b", `3`, 16, false, `{"b":3,"c":2}`},
	}
	for _, tt := range tests {
		buf := make([]byte, len(tt.body), len(tt.body)+tt.slack)
		copy(buf, tt.body)
		o, err := ParseObject(buf)
		if err != nil {
			t.Fatalf("%q: %v", tt.body, err)
		}
		got := o.SetEnd(tt.key, []byte(tt.value))
		if string(got) != tt.want {
			t.Errorf("SetEnd(%q, %s) on %q = %q, want %q", tt.key, tt.value, tt.body, got, tt.want)
		}
		if shared := &got[0] == &buf[0]; shared != tt.inPlace {
			t.Errorf("SetEnd on %q with %d spare bytes: in place %v, want %v", tt.body, tt.slack, shared, tt.inPlace)
		}
		if _, err := ParseObject(got); err != nil {
			t.Errorf("SetEnd on %q made invalid JSON %q: %v", tt.body, got, err)
		}
	}
}
