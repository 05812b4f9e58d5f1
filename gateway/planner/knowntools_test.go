package planner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/maskgate/maskgate/backends/oai"
)

func chatBody(tools []byte, tail string) []byte {
	return []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":` + string(tools) + tail + `}`)
}

// A tools array the scan validated once is compared, not scanned, the next time the same
// caller sends it; what follows it is still scanned; another caller's array is never
// vouched for by this caller's; and an array that only begins like a known one is
// scanned in full.
func TestKnownTools_VouchesOnlyForTheSameBytesOfTheSameCaller(t *testing.T) {
	var k KnownTools
	alice := k.ForCaller("alice")
	bob := k.ForCaller("bob")
	tools := toolsArray(25, "")
	if len(tools) < knownMin {
		t.Fatalf("test array of %d bytes is below knownMin", len(tools))
	}
	first, err := oai.ParseEnvelopeKnown(chatBody(tools, ""), alice)
	if err != nil || first.ToolCount != 25 {
		t.Fatalf("first parse: %v, %d tools", err, first.ToolCount)
	}
	if n, elems, ok := alice.Match(append(bytes.Clone(tools), `,"x":1}`...)); !ok || n != len(tools) || elems != 25 {
		t.Fatalf("alice's array not remembered: %d %d %v", n, elems, ok)
	}
	if _, _, ok := bob.Match(tools); ok {
		t.Fatal("bob matched alice's array")
	}
	again, err := oai.ParseEnvelopeKnown(chatBody(tools, ""), alice)
	if err != nil || again.ToolCount != 25 || !bytes.Equal(again.Tools, tools) {
		t.Fatalf("second parse: %v, %d tools", err, again.ToolCount)
	}
	// The bytes after a known array are still checked.
	if _, err := oai.ParseEnvelopeKnown(chatBody(tools, `,"temperature":tru`), alice); err == nil {
		t.Error("a body that is not JSON after a known tools array was accepted")
	}
	// An array that shares the known one's first bytes but not its end: a bad byte in
	// its last tool is found.
	bad := bytes.Replace(tools, []byte(`"t024"`), []byte(`"t024`+"\x01"+`"`), 1)
	if bytes.Equal(bad, tools) {
		t.Fatal("the test's edit did not apply")
	}
	if _, err := oai.ParseEnvelopeKnown(chatBody(bad, ""), alice); err == nil {
		t.Error("a control character in a string, past the known array's head, was accepted")
	}
	// A longer array with the same head is its own entry, with its own count.
	longer := toolsArray(26, "")
	if env, err := oai.ParseEnvelopeKnown(chatBody(longer, ""), alice); err != nil || env.ToolCount != 26 {
		t.Fatalf("longer array: %v, %d tools", err, env.ToolCount)
	}
	if env, err := oai.ParseEnvelopeKnown(chatBody(longer, ""), alice); err != nil || env.ToolCount != 26 {
		t.Fatalf("longer array again: %v, %d tools", err, env.ToolCount)
	}
}

func TestKnownTools_Bounded(t *testing.T) {
	var k KnownTools
	c := k.ForCaller("")
	for i := range maxKnownEntries + 50 {
		arr := []byte(fmt.Sprintf(`[{"n":%d,"pad":"%s"}]`, i, strings.Repeat("x", knownMin)))
		c.Remember(arr, 1)
	}
	if n := k.order.Len(); n > maxKnownEntries || k.bytes > maxKnownBytes {
		t.Errorf("%d entries, %d bytes: past the bounds %d, %d", n, k.bytes, maxKnownEntries, maxKnownBytes)
	}
	total := 0
	for _, b := range k.items {
		total += len(b)
	}
	if total != k.order.Len() {
		t.Errorf("index holds %d entries, the list %d", total, k.order.Len())
	}
}
