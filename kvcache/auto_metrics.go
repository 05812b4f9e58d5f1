package kvcache

import "github.com/prometheus/client_golang/prometheus"

var _ prometheus.Collector = (*CostModel)(nil)

var (
	autoEstimateDesc = prometheus.NewDesc("maskgate_auto_strategy_estimate_seconds",
		"Modelled engine seconds per session of each strategy open to the backend, at the last auto decision.",
		[]string{"profile", "backend", "strategy"}, nil)
	autoSelectedDesc = prometheus.NewDesc("maskgate_auto_strategy_selected",
		"1 for the strategy the auto strategy uses for the profile on the backend, 0 for the others open to it.",
		[]string{"profile", "backend", "strategy"}, nil)
	autoCostDesc = prometheus.NewDesc("maskgate_auto_engine_cost_seconds",
		"The engine costs the auto strategy uses per backend: prefill (fixed, per_token, per_token_context) decode (per_token, per_token_context), and constrained_decode, the decode mask and index pay (the same terms; absent until measured or configured); source is measured (fitted from this gateway's own requests) or configured.",
		[]string{"backend", "phase", "term", "source"}, nil)
	autoContextDesc = prometheus.NewDesc("maskgate_auto_engine_context_tokens",
		"The context window per request the auto strategy holds each backend's sessions to, configured (context_window) or reported by the engine; absent where unknown. A strategy whose modelled session outgrows it is not weighed.",
		[]string{"backend"}, nil)
	autoSwitchesDesc = prometheus.NewDesc("maskgate_auto_strategy_switches_total",
		"Times the auto strategy moved a profile on a backend from one strategy to another.",
		[]string{"profile", "backend", "from", "to"}, nil)
)

// Register registers the model's metrics with reg: per profile and backend, the last
// decision's estimates and strategy, and the switches so far. Values are read from the
// model when reg is gathered, so it may be registered at any time.
func (m *CostModel) Register(reg prometheus.Registerer) error { return reg.Register(m) }

// Describe implements prometheus.Collector.
func (m *CostModel) Describe(ch chan<- *prometheus.Desc) {
	ch <- autoEstimateDesc
	ch <- autoSelectedDesc
	ch <- autoSwitchesDesc
	ch <- autoCostDesc
	ch <- autoContextDesc
}

// Collect implements prometheus.Collector.
func (m *CostModel) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, es := range m.engines {
		src := func(fitted bool) string {
			if fitted {
				return "measured"
			}
			return "configured"
		}
		p, d := es.e.Prefill, es.e.Decode
		for _, t := range []struct {
			phase, term string
			v           float64
			fitted      bool
		}{{"prefill", "fixed", p.Fixed, es.prefillFitted}, {"prefill", "per_token", p.PerToken, es.prefillFitted},
			{"prefill", "per_token_context", p.PerTokenContext, es.prefillFitted},
			{"decode", "per_token", d.PerToken, es.decodeFitted}, {"decode", "per_token_context", d.PerTokenContext, es.decodeFitted}} {
			ch <- prometheus.MustNewConstMetric(autoCostDesc, prometheus.GaugeValue, t.v, name, t.phase, t.term, src(t.fitted))
		}
		if n := es.e.ContextTokens; n > 0 {
			ch <- prometheus.MustNewConstMetric(autoContextDesc, prometheus.GaugeValue, float64(n), name)
		}
		if c := es.e.ConstrainedDecode; !c.IsZero() {
			ch <- prometheus.MustNewConstMetric(autoCostDesc, prometheus.GaugeValue, c.PerToken, name, "constrained_decode", "per_token", src(es.constrainedFitted))
			ch <- prometheus.MustNewConstMetric(autoCostDesc, prometheus.GaugeValue, c.PerTokenContext, name, "constrained_decode", "per_token_context", src(es.constrainedFitted))
		}
	}
	for k, st := range m.states {
		if !st.haveLast {
			continue
		}
		for _, e := range st.last.Estimates {
			ch <- prometheus.MustNewConstMetric(autoEstimateDesc, prometheus.GaugeValue, e.Seconds, k.profile, k.backend, string(e.Strategy))
			v := 0.0
			if e.Strategy == st.current {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(autoSelectedDesc, prometheus.GaugeValue, v, k.profile, k.backend, string(e.Strategy))
		}
		for mv, n := range st.switches {
			ch <- prometheus.MustNewConstMetric(autoSwitchesDesc, prometheus.CounterValue, float64(n), k.profile, k.backend, string(mv[0]), string(mv[1]))
		}
	}
}
