package respstore

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A chain of responses shares its history: the store counts each message once while
// any response holds it, so a 50-turn chain costs what it holds, not 50 copies of its
// growing history; and when the last holder goes, its bytes go.
func TestResponseStore_ChainCountsEachMessageOnce(t *testing.T) {
	st := New(1<<30, time.Hour, time.Now)
	var hist []json.RawMessage
	held := 0
	for i := range 50 {
		user := json.RawMessage(`"` + strings.Repeat("u", 1000) + `"`)
		answer := json.RawMessage(`"` + strings.Repeat("a", 1000) + `"`)
		hist = append(append([]json.RawMessage(nil), hist...), user, answer)
		held += len(user) + len(answer)
		if !st.put(&Response{id: "r" + strconv.Itoa(i), owner: "o", body: answer, history: hist}) {
			t.Fatal("refused")
		}
	}
	// Messages once (100 KB), each response's body (50 KB), ids and 24 bytes a slot.
	if got, most := st.size(), int64(held+50*(1002+100)+24*2550); got > most || got < int64(held) {
		t.Errorf("a 50-turn chain holding %d bytes of messages counts %d; want between %d and %d", held, got, held, most)
	}
	t.Logf("50-turn chain: %d bytes of messages, %d counted", held, st.size())
	for i := range 50 {
		st.delete("o", "r"+strconv.Itoa(i))
	}
	if got := st.size(); got != 0 || len(st.shared) != 0 {
		t.Errorf("empty store counts %d bytes and %d shared messages", got, len(st.shared))
	}
}
