package gateway_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/maskgate/maskgate/backends/llamacpp"
	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/internal/enginetest"
)

var cancelRe = regexp.MustCompile(`cancel task, id_task = \d+`)

// slotsBusy returns how many of llama-server's slots are processing (GET /slots).
func slotsBusy(t *testing.T, url string) (busy, all int) {
	t.Helper()
	resp, err := http.Get(url + "/slots")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var slots []struct {
		IsProcessing bool `json:"is_processing"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&slots); err != nil {
		t.Fatalf("GET /slots: %v", err)
	}
	for _, s := range slots {
		if s.IsProcessing {
			busy++
		}
	}
	return busy, len(slots)
}

// howItEnded drains c, which nobody read, and says how its stream ended: finished by
// itself (its door's last event arrived), cut mid-stream by the gateway, or still open
// after wait. For a failure's message only.
func howItEnded(c net.Conn, wait time.Duration) string {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	b, err := io.ReadAll(c)
	tail := b[max(0, len(b)-300):]
	switch {
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Sprintf("still open after %v (%d bytes), ending %q", wait, len(b), tail)
	case bytes.Contains(b, []byte("data: [DONE]")) || bytes.Contains(b, []byte("message_stop")) || bytes.Contains(b, []byte("response.completed")):
		return fmt.Sprintf("finished by itself (%d bytes), ending %q", len(b), tail)
	}
	return fmt.Sprintf("closed mid-stream (%d bytes)", len(b))
}

// TestSlowReaders_RealEngineSlotsFreed: three clients, one per door, start streams from
// llama-server (4 slots; with --context-shift, --ignore-eos and no max_tokens a
// generation runs until it is cancelled) and never read. Each is cut after write_timeout and its slot is free
// again — llama-server logs the cancellation of the unfinished task — while a fourth
// client that reads is served throughout on the slot left.
func TestSlowReaders_RealEngineSlotsFreed(t *testing.T) {
	const (
		stuck        = 3
		writeTimeout = 2 * time.Second
	)
	ls := enginetest.StartLlamaServer(t, enginetest.LlamaServerOptions{Parallel: stuck + 1, CtxSize: (stuck + 1) * 2048,
		// --ignore-eos: the random model samples its end-of-turn token now and then (2 of 11
		// seeded 3,000-token generations ended by it, after 1,743 and 2,119 tokens). A
		// stream that ends before it fills the socket's buffers is never cut, and the slot
		// frees itself: on a loaded machine that was one door in three, "cut 2 of 3 slow
		// readers" after 3 minutes, with nothing leaked.
		Args: []string{"--context-shift", "--ignore-eos", "--slots"}})
	be, err := llamacpp.New(llamacpp.Options{Name: "llama", BaseURL: ls.URL, Timeout: time.Minute, Grammar: noCalls})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	srv := smallBufferServer(t, gateway.New(gateway.Options{
		Upstreams:    []gateway.Upstream{{Name: "llama", Kind: "llamacpp", Models: []string{"*"}, Backend: be}},
		WriteTimeout: writeTimeout, Registry: reg,
	}))
	host := strings.TrimPrefix(srv.URL, "http://")
	model := ls.Model

	if busy, all := slotsBusy(t, ls.URL); busy != 0 || all != stuck+1 {
		t.Fatalf("before: %d of %d slots busy, want 0 of %d", busy, all, stuck+1)
	}
	bodies := []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"go on"}]}`},
		{"/v1/responses", `{"model":"` + model + `","stream":true,"store":false,"input":"go on"}`},
		{"/v1/messages", `{"model":"` + model + `","stream":true,"max_tokens":1000000,"messages":[{"role":"user","content":"go on"}]}`},
	}
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	start := time.Now()
	for _, b := range bodies {
		c, err := dialSmall(host)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if err := sendRaw(c, host, b.path, b.body, "anthropic-version: 2023-06-01"); err != nil {
			t.Fatal(err)
		}
	}
	var busyDuring int
	waitFor(t, "three slots busy", func() bool { busyDuring, _ = slotsBusy(t, ls.URL); return busyDuring == stuck })

	served := 0
	read := func() {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(
			`{"model":"`+model+`","stream":true,"max_tokens":4,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.HasSuffix(b, []byte("data: [DONE]\n\n")) {
			t.Fatalf("reading client: %d %q", resp.StatusCode, b)
		}
		served++
	}
	aborts := func() float64 {
		return metric(t, reg, "maskgate_client_aborts_total", map[string]string{"reason": "slow_reader"})
	}
	// llama-server logs "cancel task, id_task = N" for a task stopped before its end; the
	// log is read as a 16 KiB tail, so it is looked at after every read.
	cancelled := map[string]bool{}
	seeCancels := func() {
		for _, m := range cancelRe.FindAllString(ls.LogTail(), -1) {
			cancelled[m] = true
		}
	}
	for aborts() < stuck && time.Since(start) < 3*time.Minute {
		read() // the reader is served while the three hold their slots
		seeCancels()
	}
	if aborts() != stuck {
		var how []string
		for i, c := range conns {
			how = append(how, bodies[i].path+": "+howItEnded(c, 30*time.Second))
		}
		t.Fatalf("cut %v of %d slow readers:\n%s\n%s", aborts(), stuck, strings.Join(how, "\n"), ls.LogTail())
	}
	cut := time.Since(start)
	waitFor(t, "every slot free again", func() bool { b, _ := slotsBusy(t, ls.URL); return b == 0 })
	freed := time.Since(start)
	seeCancels()
	read()
	if len(cancelled) < stuck {
		t.Errorf("llama-server logged %d task cancellations, want %d (a generation that ended by itself proves nothing)\n%s",
			len(cancelled), stuck, ls.LogTail())
	}
	for i, c := range conns {
		if err := closedByPeer(c, 30*time.Second); err != nil {
			t.Errorf("client %d: %v", i, err)
		}
	}
	t.Logf("llama-server, %d slots: %d non-reading streams held %d; cut %v after they started (write_timeout %v), every slot free %v after; reading client served %d times meanwhile",
		stuck+1, stuck, busyDuring, cut.Round(time.Millisecond), writeTimeout, freed.Round(time.Millisecond), served)
}
