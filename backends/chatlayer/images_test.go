package chatlayer

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

func TestParseDataURL(t *testing.T) {
	for _, c := range []struct {
		in, mt, data string
		ok           bool
	}{
		{"data:image/png;base64," + png, "image/png", png, true},
		{"DATA:Image/PNG;charset=x;BASE64,QUJD", "image/png", "QUJD", true},
		{"data:;base64,QUI", "", "QUI=", true},
		{"data:image/png;base64,QQ", "image/png", "QQ==", true},
		{"data:image/png;base64,QQ=", "", "", false}, // one pad where two belong
		{"data:image/png;base64,Q", "", "", false},
		{"data:image/png;base64,", "", "", false},
		{"data:image/png;base64,QU JD", "", "", false},
		{"data:image/png,QUJD", "", "", false}, // not base64
		{"data:image/png;base64", "", "", false},
		{"https://example.com/a.png", "", "", false},
		{"data:image/png;base64,QUJD===", "", "", false},
	} {
		mt, data, ok := ParseDataURL(c.in)
		if mt != c.mt || data != c.data || ok != c.ok {
			t.Errorf("ParseDataURL(%q) = %q, %q, %v; want %q, %q, %v", c.in, mt, data, ok, c.mt, c.data, c.ok)
		}
	}
}

// FuzzParseDataURL: no input panics, and what it accepts decodes as standard base64.
func FuzzParseDataURL(f *testing.F) {
	for _, s := range []string{"data:image/png;base64," + png, "data:;base64,QQ", "data:,x", "data:a;b;base64,====", "", "data:", "data:image/png;base64,QQ=", "https://x/y.png"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		mt, data, ok := ParseDataURL(s)
		if !ok {
			if mt != "" || data != "" {
				t.Fatalf("refused %q but returned %q, %q", s, mt, data)
			}
			return
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			t.Fatalf("accepted %q with data %q that does not decode: %v", s, data, err)
		}
		if mt != strings.ToLower(mt) {
			t.Fatalf("media type %q is not lowercase", mt)
		}
	})
}

func TestRewriteCannotSee(t *testing.T) {
	msgs := `[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"what is it?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png + `"}}]},{"role":"assistant","content":"a cat"},{"role":"tool","tool_call_id":"c","content":[{"type":"image_url","image_url":"https://x/y.png"}]}]`
	img, err := Rewrite([]byte(msgs), Media{})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"what is it?"},{"type":"text","text":"[image omitted: this model cannot read images]"}]},{"role":"assistant","content":"a cat"},{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"[image omitted: this model cannot read images]"}]}]`
	if string(img.Messages) != want {
		t.Errorf("messages:\n got %s\nwant %s", img.Messages, want)
	}
	if len(img.Data) != 0 {
		t.Errorf("data %q for an engine that cannot see", img.Data)
	}
	wantNotes := []string{"messages[1].content[1]: image omitted: this model cannot read images", "messages[3].content[0]: image omitted: this model cannot read images"}
	if strings.Join(img.Notes, "|") != strings.Join(wantNotes, "|") {
		t.Errorf("notes %q, want %q", img.Notes, wantNotes)
	}
}

func TestRewriteSees(t *testing.T) {
	msgs := `[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,QQ","detail":"low"}},{"type":"text","text":"and"},{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,Q"}},{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,QUJD"}}]}]`
	img, err := Rewrite([]byte(msgs), Media{Sees: true, Marker: "<M>"})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[{"type":"text","text":"<M>"},{"type":"text","text":"and"},{"type":"text","text":"[image omitted: the gateway does not fetch image URLs; send the image as a data: URL]"},{"type":"text","text":"[image omitted: its data: URL is not base64 image data]"},{"type":"text","text":"<M>"}]}]`
	if string(img.Messages) != want {
		t.Errorf("messages:\n got %s\nwant %s", img.Messages, want)
	}
	if strings.Join(img.Data, ",") != "QQ==,QUJD" {
		t.Errorf("data %q, want [QQ== QUJD]", img.Data)
	}
	if len(img.Notes) != 2 || !strings.HasPrefix(img.Notes[0], "messages[0].content[2]: ") || !strings.HasPrefix(img.Notes[1], "messages[0].content[3]: ") {
		t.Errorf("notes %q", img.Notes)
	}
}

func TestRewriteKeepsBytes(t *testing.T) {
	for _, msgs := range []string{
		`[{"role":"user","content":"no images here"}]`,
		`[ {"role":"user", "content":[{"type":"text","text":"the words image_url"}]} ]`,
	} {
		img, err := Rewrite([]byte(msgs), Media{})
		if err != nil {
			t.Fatal(err)
		}
		if string(img.Messages) != msgs || img.Notes != nil {
			t.Errorf("Rewrite(%s) = %s, %q; want it unchanged", msgs, img.Messages, img.Notes)
		}
	}
	// Only the message with an image is rewritten; the others keep their bytes.
	msgs := `[{"role":"user" , "content":"first"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]`
	img, _ := Rewrite([]byte(msgs), Media{})
	if !strings.HasPrefix(string(img.Messages), `[{"role":"user" , "content":"first"},`) || !json.Valid(img.Messages) {
		t.Errorf("got %s", img.Messages)
	}
	if _, err := Rewrite([]byte(`[{"role":"user","content":[{"type":"image_url"`), Media{}); err == nil {
		t.Error("a truncated array is not an error")
	}
}

// FuzzRewrite: no messages array panics Rewrite; for a valid one, the result is valid
// JSON, unchanged without images, and holds one marker per datum and one note per
// warning.
func FuzzRewrite(f *testing.F) {
	for _, s := range []string{
		`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}},{"type":"image_url","image_url":"https://x"}]}]`,
		`[{"role":"user","content":"image_url"}]`,
		`[{"role":"tool","content":[{"type":"image_url"},{"type":"text","text":"t"}]}]`,
		`[]`, `[1,"a",null]`, `{"content":[]}`, `[{"content":[{"type":"image_url","image_url":{"url":5}}]}]`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, msgs string, sees bool) {
		img, err := Rewrite([]byte(msgs), Media{Sees: sees, Marker: "<M>"})
		if err != nil {
			return
		}
		if !json.Valid(img.Messages) {
			t.Fatalf("Rewrite(%s) = %s: not JSON", msgs, img.Messages)
		}
		if len(img.Notes) == 0 && len(img.Data) == 0 && string(img.Messages) != msgs {
			t.Fatalf("Rewrite(%s) changed it to %s with nothing to say", msgs, img.Messages)
		}
		if !sees && len(img.Data) != 0 {
			t.Fatalf("data %q for an engine that cannot see", img.Data)
		}
		if n := strings.Count(string(img.Messages), `"text":"<M>"`) - strings.Count(msgs, `"text":"<M>"`); n != len(img.Data) {
			t.Fatalf("%d markers added for %d data in %s", n, len(img.Data), img.Messages)
		}
		if n := strings.Count(string(img.Messages), "[image omitted: ") - strings.Count(msgs, "[image omitted: "); n != len(img.Notes) {
			t.Fatalf("%d notes added for %d warnings in %s", n, len(img.Notes), img.Messages)
		}
	})
}
