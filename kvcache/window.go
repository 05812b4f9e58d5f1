package kvcache

// openStrategies returns the strategies the auto strategy weighs for a profile on engine e, in
// Strategies order, and unfit: those the backend can do (eligible) that are left out
// because their sessions do not fit e's context window. A session fits when the context
// it ends with (session: its last turn's prompt and answer) is at most
// e.ContextTokens; so a 73,000-token catalog under mask on a 65,536-token window is never
// offered, and index or remove serves it. Where no strategy's whole session fits (a
// conversation longer than any window, which the client must compact), those whose first
// turn fits are weighed; where not even that fits, every strategy the backend can do,
// whose requests the gateway's own budget check then refuses. With the window unknown
// (zero) nothing is left out.
func openStrategies(e Engine, w Workload, cat CatalogSize, eagerMaxTools int) (open, unfit []Strategy) {
	var can []Strategy
	for _, s := range Strategies() {
		if eligible(s, e.Capabilities, cat, eagerMaxTools) {
			can = append(can, s)
		}
	}
	if e.ContextTokens <= 0 {
		return can, nil
	}
	first := w // the first turn alone, with its share of the loads
	first.TurnsPerSession = 1
	first.LoadsPerSession = w.LoadsPerSession / float64(sessionTurns(w))
	for _, wl := range []Workload{w, first} {
		open, unfit = nil, nil
		for _, s := range can {
			if _, c := session(s, wl, cat, 1, e); c <= float64(e.ContextTokens) {
				open = append(open, s)
			} else {
				unfit = append(unfit, s)
			}
		}
		if len(open) > 0 {
			return open, unfit
		}
	}
	return can, nil
}

// ObserveContext records backend's context window per request, in tokens, as the backend
// reports it (llama-server's /props, the embedded engine's num_ctx), for a backend whose
// window was not configured; zero or less says nothing.
func (m *CostModel) ObserveContext(backend string, tokens int) {
	if tokens <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	es := m.engine(backend)
	es.e.ContextTokens, es.configured.ContextTokens = tokens, tokens
}

// ContextTokens returns the context window the model holds backend's sessions to: zero
// where it is unknown.
func (m *CostModel) ContextTokens(backend string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.engine(backend).e.ContextTokens
}
