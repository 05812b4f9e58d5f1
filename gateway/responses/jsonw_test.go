package responses

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendString writes strings as encoding/json does with HTML escaping off.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ slash /", "\n\r\t\b\f\x00\x01\x1f\x7f", "<b>&amp;</b>",
		"caf\u00e9 \U0001F600", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(quote(s)); got != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("quote(%q) = %s, want %s", s, got, want.Bytes())
		}
	}
}

func FuzzQuote(f *testing.F) {
	f.Add("a\u2028<\xff")
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got := string(quote(s)); got != string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))) {
			t.Errorf("quote(%q) = %s, want %s", s, got, want.Bytes())
		}
	})
}
