package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/maskgate/maskgate/gateway"
	"github.com/maskgate/maskgate/toolsearch/state"
)

func adminDo(t *testing.T, method, url, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestAdmin_ThreadStatsClearAndCleanup(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	mem := state.NewMemory(state.Options{TTL: time.Hour, Now: clock})
	mem.Load("a", "x")
	mem.Load("b", "y")
	srv := httptest.NewServer(gateway.New(gateway.Options{State: mem, AdminKey: "adm"}))
	defer srv.Close()

	if code, _ := adminDo(t, "GET", srv.URL+"/admin/threads", ""); code != 401 {
		t.Errorf("no key: %d", code)
	}
	if code, _ := adminDo(t, "GET", srv.URL+"/admin/threads", "wrong"); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
	code, st := adminDo(t, "GET", srv.URL+"/admin/threads", "adm")
	if code != 200 || st["threads"] != float64(2) || st["oldest_access"] != "2026-01-01T00:00:00Z" {
		t.Errorf("stats %d %v", code, st)
	}
	if _, out := adminDo(t, "DELETE", srv.URL+"/admin/threads/a", "adm"); out["deleted"] != true {
		t.Errorf("delete a: %v", out)
	}
	now = now.Add(2 * time.Hour)
	if _, out := adminDo(t, "POST", srv.URL+"/admin/threads/cleanup", "adm"); out["removed"] != float64(1) {
		t.Errorf("cleanup: %v", out)
	}
	mem.Load("c", "z")
	if _, out := adminDo(t, "DELETE", srv.URL+"/admin/threads", "adm"); out["cleared"] != float64(1) {
		t.Errorf("clear: %v", out)
	}
}

func TestAdmin_OffWithoutAKey(t *testing.T) {
	srv := httptest.NewServer(gateway.New(gateway.Options{State: state.NewMemory(state.Options{})}))
	defer srv.Close()
	if code, out := adminDo(t, "GET", srv.URL+"/admin/threads", "anything"); code != 404 {
		t.Errorf("admin without a key configured: %d %v", code, out)
	}
}
