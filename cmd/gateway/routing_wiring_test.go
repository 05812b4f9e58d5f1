package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/maskgate/maskgate/backends"
	"github.com/maskgate/maskgate/config"
)

// TestBuildUpstreams_RouterHints: a backend's routing.session_token and routing.nvext
// reach its upstream as configured, and a backend without them sends neither.
func TestBuildUpstreams_RouterHints(t *testing.T) {
	cfg, err := config.Parse("g.yaml", []byte("backends:\n"+
		"  - name: dynamo\n    kind: vllm\n    url: http://127.0.0.1:1/v1\n    models: [d]\n    routing:\n"+
		"      hint_value: caller\n      session_token: x-session-token\n      nvext:\n        session_control: true\n"+
		"        session_action: bind\n        session_timeout: 60\n        priority: 0\n        strict_priority: 3\n        speculative_prefill: true\n"+
		"  - name: plain\n    kind: vllm\n    url: http://127.0.0.1:1/v1\n    models: [p]\n"))
	if err != nil {
		t.Fatal(err)
	}
	ups, err := buildUpstreams(cfg, backends.HintTransport(nil), nil, quiet())
	if err != nil {
		t.Fatal(err)
	}
	zero, three := 0, 3
	want := backends.NVExt{SessionControl: true, SessionAction: "bind", SessionTimeout: 60, Priority: &zero, StrictPriority: &three, SpeculativePrefill: true}
	if d := cmp.Diff(want, ups[0].NVExt); d != "" || ups[0].SessionTokenHeader != "x-session-token" || ups[0].HintValue != "caller" {
		t.Errorf("dynamo: session token %q, hint value %q, nvext (-want +got):\n%s", ups[0].SessionTokenHeader, ups[0].HintValue, d)
	}
	if !ups[1].NVExt.Empty() || ups[1].SessionTokenHeader != "" {
		t.Errorf("plain: session token %q, nvext %+v; want none", ups[1].SessionTokenHeader, ups[1].NVExt)
	}
}
