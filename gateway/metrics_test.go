package gateway_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics_LintClean(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up)
	gw.post(t, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`)
	problems, err := testutil.GatherAndLint(gw.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("metric %s: %s", p.Metric, p.Text)
	}
}

func TestMetrics_CountTokensAndStatuses(t *testing.T) {
	up := newUpstream(t, replyJSON(200, completionJSON))
	gw := gatewayFor(t, up)
	gw.post(t, `{"model":"m1","messages":[{"role":"user","content":"x"}]}`)
	gw.post(t, `{"model":"anything","messages":[{"role":"user","content":"x"}]}`)
	gw.post(t, `{"model":"m1"`)

	sup := newUpstream(t, replySSE(streamEvents, true))
	sgw := gatewayFor(t, sup)
	sgw.post(t, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"x"}]}`)

	want := `
# HELP maskgate_cached_tokens_total Prompt tokens served from the engine's prefix cache; the hit rate over any window is rate(cached)/rate(prompt). source is reported or estimated.
# TYPE maskgate_cached_tokens_total counter
maskgate_cached_tokens_total{backend="up",door="chat_completions",model="m1",source="reported",strategy="eager"} 8
maskgate_cached_tokens_total{backend="up",door="chat_completions",model="other",source="reported",strategy="eager"} 8
# HELP maskgate_prompt_tokens_total Prompt tokens, as the backend reported them.
# TYPE maskgate_prompt_tokens_total counter
maskgate_prompt_tokens_total{backend="up",door="chat_completions",model="m1",strategy="eager"} 10
maskgate_prompt_tokens_total{backend="up",door="chat_completions",model="other",strategy="eager"} 10
# HELP maskgate_requests_total Requests by backend, model, HTTP status (499: client went away) and door (chat_completions, responses, messages; embeddings, completions, rerank, score passed through).
# TYPE maskgate_requests_total counter
maskgate_requests_total{backend="none",door="chat_completions",model="none",status="400"} 1
maskgate_requests_total{backend="up",door="chat_completions",model="m1",status="200"} 1
maskgate_requests_total{backend="up",door="chat_completions",model="other",status="200"} 1
`
	if err := testutil.GatherAndCompare(gw.reg, strings.NewReader(want),
		"maskgate_requests_total", "maskgate_prompt_tokens_total", "maskgate_cached_tokens_total"); err != nil {
		t.Error(err)
	}
	// The stream's usage chunk was dropped for the client but still counted.
	wantStream := `
# HELP maskgate_completion_tokens_total Completion tokens, as the backend reported them.
# TYPE maskgate_completion_tokens_total counter
maskgate_completion_tokens_total{backend="up",door="chat_completions",model="m1",strategy="eager"} 9
# HELP maskgate_cached_tokens_total Prompt tokens served from the engine's prefix cache; the hit rate over any window is rate(cached)/rate(prompt). source is reported or estimated.
# TYPE maskgate_cached_tokens_total counter
maskgate_cached_tokens_total{backend="up",door="chat_completions",model="m1",source="reported",strategy="eager"} 24
`
	if err := testutil.GatherAndCompare(sgw.reg, strings.NewReader(wantStream),
		"maskgate_completion_tokens_total", "maskgate_cached_tokens_total"); err != nil {
		t.Error(err)
	}
	// One stream, so one observation each; the first token and the gateway's own time
	// both fall within the request's duration.
	dCount, dSum := histogram(t, sgw.reg, "maskgate_request_duration_seconds")
	for _, name := range []string{"maskgate_time_to_first_token_seconds", "maskgate_gateway_overhead_seconds"} {
		n, sum := histogram(t, sgw.reg, name)
		if n != 1 || !(sum > 0 && sum <= dSum) {
			t.Errorf("%s: %d observations summing %gs, want 1 of more than 0 and at most the request's %gs", name, n, sum, dSum)
		}
	}
	if dCount != 1 {
		t.Errorf("request_duration_seconds: %d observations, want 1", dCount)
	}
	// Whole answers: the two routed requests are timed; the malformed body, refused
	// before routing, is only counted in requests_total.
	if n, _ := histogram(t, gw.reg, "maskgate_request_duration_seconds"); n != 2 {
		t.Errorf("request_duration_seconds: %d observations, want 2 (the routed requests)", n)
	}
	if n, _ := histogram(t, gw.reg, "maskgate_time_to_first_token_seconds"); n != 0 {
		t.Errorf("time_to_first_token_seconds: %d observations of whole answers, want none", n)
	}
}

// histogram sums the sample counts and sums of a histogram's series.
func histogram(t *testing.T, reg *prometheus.Registry, name string) (count uint64, sum float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			count += m.GetHistogram().GetSampleCount()
			sum += m.GetHistogram().GetSampleSum()
		}
	}
	return count, sum
}
