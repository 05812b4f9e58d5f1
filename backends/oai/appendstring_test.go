package oai

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encodingJSON(s string) string {
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return string(bytes.TrimSuffix(want.Bytes(), []byte("\n")))
}

func TestAppendString_AsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ slash /", "\n\r\t\b\f\x00\x01\x1f\x7f", "<b>&amp;</b>",
		"caf\u00e9 \U0001F600", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80"} {
		if got, want := string(AppendString(nil, s)), encodingJSON(s); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\u2028<\xff\b")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendString(nil, s)), encodingJSON(s); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
