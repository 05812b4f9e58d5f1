package kvcache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/maskgate/maskgate/toolsearch"
	"github.com/maskgate/maskgate/toolsearch/meta"
)

// The catalog the engine sees is the first thing in the prompt under every strategy, so
// its bytes decide whether the prefix cache can hit at all. The gateway composes it in
// gateway.(*Server).toolsArray, which is unexported; these tests build it the same way
// from the exported pieces that function uses: meta.Definitions, Catalog.Render (mask,
// allowed_tools, validate, and eager without the meta-tools) and Catalog.AppendNames
// (remove), over a profile catalog from toolsearch.New layered with client tools by
// WithClient.

// renderChildEnv makes the test binary, re-executed, print the digest and exit.
const renderChildEnv = "KVCACHE_RENDER_CHILD"

// engineTools mirrors toolsArray: the meta-tools, then the whole catalog (mask) or the
// loaded tools in load order (remove). AppendNames with nil names appends the whole
// catalog, so nothing loaded must be an empty, non-nil slice, as the gateway's is.
func engineTools(cat *toolsearch.Catalog, autoLoad, mask bool, loaded []string) []byte {
	defs := bytes.TrimSuffix(meta.Definitions(autoLoad), []byte("]"))
	if mask {
		return append(append(append([]byte(nil), defs...), ','), cat.Render()[1:]...)
	}
	if l := cat.AppendNames(nil, append([]string{}, loaded...)); len(l) > 2 {
		return append(append(append([]byte(nil), defs...), ','), l[1:]...)
	}
	return append(append([]byte(nil), defs...), ']')
}

// profileTools are 120 tools keyed by name, with what tends to break determinism: escapes,
// non-ASCII, U+2028, invalid UTF-8, parameters whose members are not in sorted order.
func profileTools() map[string]toolsearch.Tool {
	products := []string{"github", "slack", "gmail", "calendar", "drive", "postgres"}
	verbs := []string{"create", "list", "get", "update", "delete"}
	tools := make(map[string]toolsearch.Tool)
	for i := range 120 {
		name := fmt.Sprintf("%s_%s_%d", products[i%len(products)], verbs[i%len(verbs)], i)
		yes := i%7 == 0
		t := toolsearch.Tool{
			Name: name,
			Description: fmt.Sprintf("%s a record #%d. Quotes \" and \\ backslash, tab\t, <b>&amp;</b>, ünïcode ✓, \u2028 and bad \xff bytes.",
				verbs[i%len(verbs)], i),
			Parameters: []byte(fmt.Sprintf(`{"type":"object","required":["z%d"],"properties":{"z%d":{"type":"string"},"a":{"type":"integer","maximum":%d}}}`, i, i, i)),
			Keywords:   []string{"kw", products[i%len(products)]},
		}
		if yes {
			t.Strict = &yes
		}
		tools[name] = t
	}
	return tools
}

// clientTools are a request's own tools: one overrides a profile tool, one is new.
func clientTools() []toolsearch.Tool {
	return []toolsearch.Tool{
		{Name: "local_search", Description: "Search the client's files.", Parameters: []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		{Name: "github_create_0", Description: "The client's own version."},
	}
}

// renderDigest builds every tools array a strategy can send from tools listed in an
// order set by seed (and by map iteration), and returns the SHA-256 of them all,
// each length-prefixed.
func renderDigest(t testing.TB, seed int64) string {
	t.Helper()
	byName := profileTools()
	list := make([]toolsearch.Tool, 0, len(byName))
	for _, tool := range byName { // map order: different every run
		list = append(list, tool)
	}
	rand.New(rand.NewSource(seed)).Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	profile, err := toolsearch.New(list)
	if err != nil {
		t.Fatal(err)
	}
	request, err := profile.WithClient(clientTools())
	if err != nil {
		t.Fatal(err)
	}
	loaded := []string{"slack_list_1", "local_search", "github_create_0", "drive_get_4"}
	h := sha256.New()
	put := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	for _, cat := range []*toolsearch.Catalog{profile, request} {
		put(cat.Render()) // eager
		for _, autoLoad := range []bool{false, true} {
			put(engineTools(cat, autoLoad, true, nil))     // mask, allowed_tools, validate
			put(engineTools(cat, autoLoad, false, nil))    // remove, nothing loaded
			put(engineTools(cat, autoLoad, false, loaded)) // remove, after loads
		}
		put([]byte(cat.Version()))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestRender_ByteIdenticalAcrossRunsAndInputOrder(t *testing.T) {
	want := renderDigest(t, 0)
	for seed := int64(1); seed < 20; seed++ {
		if got := renderDigest(t, seed); got != want {
			t.Fatalf("seed %d: digest %s, want %s", seed, got, want)
		}
	}
}

func TestRender_ByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	want := renderDigest(t, 0)
	for _, procs := range []int{1, max(4, runtime.NumCPU())} {
		prev := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		got := make([]string, 16)
		for g := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[g] = renderDigest(t, int64(100+g))
			}()
		}
		wg.Wait()
		runtime.GOMAXPROCS(prev)
		for g, d := range got {
			if d != want {
				t.Errorf("GOMAXPROCS %d, goroutine %d: digest %s, want %s", procs, g, d, want)
			}
		}
	}
}

// A restart is a new process: new map seeds, new heap, a new GOMAXPROCS. The child is
// this test binary, re-executed to run TestRender_Child only.
func TestRender_ByteIdenticalAcrossRestart(t *testing.T) {
	if os.Getenv(renderChildEnv) != "" {
		t.Skip("in the child")
	}
	want := renderDigest(t, 0)
	for _, procs := range []string{"1", "4"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRender_Child$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), renderChildEnv+"=1", "GOMAXPROCS="+procs)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child with GOMAXPROCS=%s: %v\n%s", procs, err, out)
		}
		got := ""
		for line := range strings.Lines(string(out)) {
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "digest="); ok {
				got = d
			}
		}
		if got != want {
			t.Errorf("child with GOMAXPROCS=%s: digest %q, want %q\n%s", procs, got, want, out)
		}
	}
}

func TestRender_Child(t *testing.T) {
	if os.Getenv(renderChildEnv) == "" {
		t.Skip("run by TestRender_ByteIdenticalAcrossRestart")
	}
	fmt.Printf("digest=%s\n", renderDigest(t, int64(os.Getpid())))
}

// The digest would pass if every strategy rendered nothing at all: check the pieces are
// what the strategies need.
func TestRender_StrategiesDifferWhereTheyMust(t *testing.T) {
	cat, err := toolsearch.New([]toolsearch.Tool{{Name: "b_tool"}, {Name: "a_tool"}})
	if err != nil {
		t.Fatal(err)
	}
	a := `{"type":"function","function":{"name":"a_tool"}}`
	b := `{"type":"function","function":{"name":"b_tool"}}`
	defs := strings.TrimSuffix(string(meta.Definitions(false)), "]")
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{name: "eager", got: cat.Render(), want: "[" + a + "," + b + "]"},
		{name: "mask", got: engineTools(cat, false, true, nil), want: defs + "," + a + "," + b + "]"},
		{name: "remove, none loaded", got: engineTools(cat, false, false, nil), want: defs + "]"},
		{name: "remove, load order", got: engineTools(cat, false, false, []string{"b_tool", "a_tool"}), want: defs + "," + b + "," + a + "]"},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}
