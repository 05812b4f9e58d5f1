package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  string // a tools/call result, as JSON
		want string
	}{
		{"text parts joined", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b\nc"}]}`, "a\nb\nc"},
		{"empty", `{"content":[]}`, ""},
		{"structured when no text", `{"content":[],"structuredContent":{"z":1,"a":[true,null]}}`, `{"a":[true,null],"z":1}`},
		{"structured ignored next to text", `{"content":[{"type":"text","text":"t"}],"structuredContent":{"a":1}}`, "t"},
		{"image and audio", `{"content":[{"type":"image","mimeType":"image/png","data":"AAECAw=="},{"type":"audio","mimeType":"audio/wav","data":"AAE="}]}`,
			"[image image/png, 4 bytes]\n[audio audio/wav, 2 bytes]"},
		{"image without a type", `{"content":[{"type":"image","data":""}]}`, "[image unknown type, 0 bytes]"},
		{"resource link", `{"content":[{"type":"resource_link","uri":"file:///a.txt","name":"a"}]}`, "file:///a.txt"},
		{"embedded text", `{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","text":"inside"}}]}`, "inside"},
		{"embedded blob", `{"content":[{"type":"resource","resource":{"uri":"file:///a.gz","mimeType":"application/gzip","blob":"AAECAw=="}}]}`,
			"[resource file:///a.gz application/gzip, 4 bytes]"},
		{"mixed, with structured", `{"content":[{"type":"image","mimeType":"image/png","data":"AA=="},{"type":"resource_link","uri":"u:1","name":"x"}],"structuredContent":[1,2]}`,
			"[image image/png, 1 bytes]\nu:1\n[1,2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res sdk.CallToolResult
			if err := json.Unmarshal([]byte(tc.res), &res); err != nil {
				t.Fatal(err)
			}
			if got := render(&res, MaxText); got != tc.want {
				t.Errorf("render = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRender_Cut(t *testing.T) {
	text := func(parts ...string) *sdk.CallToolResult {
		r := &sdk.CallToolResult{}
		for _, p := range parts {
			r.Content = append(r.Content, &sdk.TextContent{Text: p})
		}
		return r
	}
	const limit = 100
	if got := render(text(strings.Repeat("a", limit)), limit); got != strings.Repeat("a", limit) {
		t.Errorf("a result of exactly the limit was changed: %q", got)
	}
	got := render(text(strings.Repeat("a", 60), strings.Repeat("b", 60)), limit)
	kept := limit - cutNote
	if want := strings.Repeat("a", kept) + fmt.Sprintf("… [result cut: %d more bytes]", 121-kept); got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	// A cut never splits a UTF-8 sequence.
	got = render(text(strings.Repeat("é", 100)), limit)
	if !utf8.ValidString(got) || len(got) > limit {
		t.Errorf("render = %q (%d bytes)", got, len(got))
	}
}

// FuzzRender: whatever a server answers, the text is at most the limit, a
// cut says how much it dropped, and valid UTF-8 stays valid.
func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"` + strings.Repeat("é", 200) + `"},{"type":"text","text":"x"}]}`,
		`{"content":[],"structuredContent":{"b":[1,2,{"c":"` + strings.Repeat("z", 300) + `"}],"a":null}}`,
		`{"content":[{"type":"image","mimeType":"image/png","data":"AAECAw=="},{"type":"resource_link","uri":"file:///x","name":"x"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"u","text":"` + strings.Repeat("日本", 100) + `"}}],"isError":true}`,
		`{"content":[{"type":"resource","resource":{"uri":"u","blob":"AAAA"}}]}`,
		`{"content":[{"type":"audio","mimeType":"audio/wav","data":""},{"type":"text","text":""}]}`,
	} {
		f.Add([]byte(seed), uint16(100))
		f.Add([]byte(seed), uint16(cutNote))
		f.Add([]byte(seed), uint16(1000))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		var res sdk.CallToolResult
		if err := json.Unmarshal(data, &res); err != nil {
			return
		}
		lim := cutNote + int(limit)%4096
		full := render(&res, 1<<30)
		got := render(&res, lim)
		if len(full) <= lim {
			if got != full {
				t.Fatalf("a result within the limit changed:\n%q\n%q", got, full)
			}
			return
		}
		if len(got) > lim {
			t.Fatalf("%d bytes, limit %d", len(got), lim)
		}
		i := strings.LastIndex(got, "… [result cut: ")
		if i < 0 {
			t.Fatalf("cut without a note: %q", got)
		}
		kept := got[:i]
		if !strings.HasPrefix(full, kept) {
			t.Fatalf("the kept text is not the start of the result")
		}
		if want := fmt.Sprintf("… [result cut: %d more bytes]", len(full)-len(kept)); got[i:] != want {
			t.Fatalf("note %q, want %q", got[i:], want)
		}
		if utf8.ValidString(full) && !utf8.ValidString(got) {
			t.Fatalf("the cut split a UTF-8 sequence: %q", got)
		}
	})
}
