package toolsearch

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"runtime"
	"sync"
	"testing"
)

// The rendered catalog is golden: any change to it changes every prompt prefix built from
// it, so it must be deliberate.
func TestRender_Golden(t *testing.T) {
	golden(t, "render.golden.json", append(corpus(t).Render(), '\n'))
}

// The same tools render to the same bytes however they were listed, on any number of
// threads, every time.
func TestRender_ByteIdenticalAcrossOrderAndGoroutines(t *testing.T) {
	tools, err := ReadFiles("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	want := corpus(t).Render()
	wantVersion := corpus(t).Version()
	for _, procs := range []int{1, 2, 8} {
		prev := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func(seed int64) {
				defer wg.Done()
				shuffled := append([]Tool(nil), tools...)
				rand.New(rand.NewSource(seed)).Shuffle(len(shuffled), func(i, j int) {
					shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
				})
				c, err := New(shuffled)
				if err != nil {
					errs <- err.Error()
					return
				}
				if got := c.Render(); !bytes.Equal(got, want) {
					errs <- "render differs:\n" + string(got)
				}
				if c.Version() != wantVersion {
					errs <- "version differs"
				}
			}(int64(g))
		}
		wg.Wait()
		runtime.GOMAXPROCS(prev)
		close(errs)
		for e := range errs {
			t.Fatalf("GOMAXPROCS %d: %s", procs, e)
		}
	}
}

func TestRender_IsValidJSONThatRoundTrips(t *testing.T) {
	tricky := "Quotes \" and \\ backslash, <html> & co, tab\t, newline\n, nul\x00, \u2028, bad \xff, ünïcode ✓"
	yes := true
	c, err := New([]Tool{{Name: "t", Description: tricky, Strict: &yes, Parameters: json.RawMessage(`{"type":"object"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	out := c.Render()
	var decoded []struct {
		Type     string `json:"type"`
		Function struct {
			Name, Description string
			Parameters        json.RawMessage
			Strict            *bool
		} `json:"function"`
	}
	if err := json.Unmarshal(out, &decoded); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	f := decoded[0].Function
	if want := bytes.ToValidUTF8([]byte(tricky), []byte("\ufffd")); f.Description != string(want) {
		t.Errorf("description = %q, want %q", f.Description, want)
	}
	if f.Strict == nil || !*f.Strict || string(f.Parameters) != `{"type":"object"}` {
		t.Errorf("function = %+v", f)
	}
	if !bytes.Contains(out, []byte("<html> & co")) {
		t.Errorf("HTML characters were escaped: %s", out)
	}
}

func TestAppendNames_SubsetRendersEachToolAsTheWholeDoes(t *testing.T) {
	c := corpus(t)
	whole := c.Render()
	sub := c.AppendNames(nil, []string{"send_email", "missing", "get_weather"})
	a, _ := c.Lookup("send_email")
	b, _ := c.Lookup("get_weather")
	want := "[" + string(a.rendered) + "," + string(b.rendered) + "]"
	if string(sub) != want {
		t.Errorf("subset = %s", sub)
	}
	for _, part := range [][]byte{a.rendered, b.rendered} {
		if !bytes.Contains(whole, part) {
			t.Errorf("the whole render lacks %s", part)
		}
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil || !bytes.Equal(buf.Bytes(), whole) {
		t.Errorf("WriteTo wrote %d bytes, %v", buf.Len(), err)
	}
}
