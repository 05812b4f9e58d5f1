package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The smoke test checks the report's structure, never its timings: speed is what the
// tool reports, not what a unit test asserts.
func TestMeasure_ThreePathsEveryTable(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 1500 requests")
	}
	const n = 200
	rep, err := Measure(context.Background(), Config{Rate: 500, N: n, Block: 50, Warmup: 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated {
		t.Error("report is truncated")
	}
	var tables []string
	for _, tb := range rep.Tables {
		tables = append(tables, tb.Response+"/"+tb.Measure)
		var paths []string
		for _, r := range tb.Rows {
			paths = append(paths, r.Path)
			if r.OK != n || r.Errors != 0 {
				t.Errorf("%s %s: %d ok, %d errors (first: %s); want %d ok", tables[len(tables)-1], r.Path, r.OK, r.Errors, r.FirstError, n)
			}
			l := r.Latency
			if !(0 < l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max) {
				t.Errorf("%s %s: percentiles out of order: %+v", tables[len(tables)-1], r.Path, l)
			}
			if r.Rate <= 0 {
				t.Errorf("%s %s: achieved rate %g", tables[len(tables)-1], r.Path, r.Rate)
			}
			if (r.Added == nil) != (r.Path == pathDirect) {
				t.Errorf("%s %s: added latency present = %v", tables[len(tables)-1], r.Path, r.Added != nil)
			}
			if (r.VsProxy == nil) != (r.Path != pathGateway) {
				t.Errorf("%s %s: ratio to the proxy present = %v", tables[len(tables)-1], r.Path, r.VsProxy != nil)
			}
		}
		if diff := cmp.Diff([]string{pathDirect, pathProxy, pathGateway}, paths); diff != "" {
			t.Errorf("%s paths (-want +got):\n%s", tables[len(tables)-1], diff)
		}
	}
	if diff := cmp.Diff([]string{"whole/total", "stream/first_event", "stream/total"}, tables); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}

	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(md.String(), "\n| gateway |"); got != 3 {
		t.Errorf("Markdown has %d gateway rows, want 3:\n%s", got, md.String())
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Errorf("report does not marshal: %v", err)
	}
}

func TestConfig_RefusesNonLoopback(t *testing.T) {
	for _, c := range []Config{
		{Gateway: "http://10.1.2.3:4000"},
		{Gateway: "http://gateway.example.com"},
		{Gateway: "https://[::1]:4000"}, // not a plain-HTTP base URL
		{UpstreamAddr: "0.0.0.0:18080"},
		{UpstreamAddr: ":18080"},
	} {
		if err := c.withDefaults().validate(); err == nil {
			t.Errorf("%+v was accepted", c)
		}
	}
	for _, c := range []Config{
		{Gateway: "http://127.0.0.1:4000"},
		{Gateway: "http://localhost:4000/"},
		{Gateway: "http://[::1]:4000", UpstreamAddr: "[::1]:0"},
	} {
		if err := c.withDefaults().validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestRun_BadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"-gateway", "http://192.0.2.1:4000"},
		{"-rate", "-5"},
		{"-procs", "-1"},
		{"extra"},
	} {
		if got := run(args, io.Discard, io.Discard); got != 2 {
			t.Errorf("run(%q) = %d, want 2", args, got)
		}
	}
}

func TestMeasure_ExternalGatewayMustRouteToUpstream(t *testing.T) {
	misrouted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"model not found"}}`, http.StatusNotFound)
	}))
	defer misrouted.Close()
	_, err := Measure(context.Background(), Config{Gateway: misrouted.URL, N: 10})
	if err == nil || !strings.Contains(err.Error(), "route the model") {
		t.Errorf("err = %v, want advice on routing the model", err)
	}
}

func TestPercentiles_NearestRank(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100 - i) // 100..1, unsorted
	}
	want := Percentiles{P50: 50, P90: 90, P99: 99, Max: 100}
	if got := percentiles(ds); got != want {
		t.Errorf("percentiles = %+v, want %+v", got, want)
	}
	if got := percentiles([]time.Duration{7}); got != (Percentiles{7, 7, 7, 7}) {
		t.Errorf("one sample: %+v", got)
	}
}
