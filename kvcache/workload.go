package kvcache

import "time"

// shared is the sessions started within residency before now, at least one.
func (st *autoState) shared(now time.Time, residency time.Duration) float64 {
	cut := now.Add(-residency)
	i := 0
	for i < len(st.starts) && st.starts[i].Before(cut) {
		i++
	}
	st.starts = append(st.starts[:0], st.starts[i:]...)
	return float64(max(len(st.starts), 1))
}

// halve weighs every observation so far by one half.
func (st *autoState) halve() {
	for _, p := range []*float64{&st.sessions, &st.turns, &st.input, &st.output, &st.loads, &st.loadTokens, &st.strays, &st.strayTurns} {
		*p /= 2
	}
}

// MaxTurnsPerSession bounds the session a workload models. Turns whose sessions began
// unseen (before a restart, or without a new conversation since) would otherwise make
// one session of them all, and every decision would cost a step per turn ever observed
// (a gateway at 1,000 requests/s slowed to a crawl within seconds). Past a few hundred
// turns the catalog's one prefill per session weighs nothing in any strategy's cost.
const MaxTurnsPerSession = 256

// workload blends the observations with the prior, which weighs as one session until a
// whole session has been measured (the second has started), and nothing after.
func (st *autoState) workload(prior Workload, cat CatalogSize) Workload {
	p := priorDefaults(prior, cat)
	k := 1.0 // the prior's weight, in sessions
	if st.sessions >= 2 && st.turns > 0 {
		k = 0
	}
	w := Workload{
		TurnsPerSession: min((k*p.TurnsPerSession+st.turns)/(k+st.sessions), MaxTurnsPerSession),
		LoadsPerSession: (k*p.LoadsPerSession + st.loads) / (k + st.sessions),
	}
	pt := k * p.TurnsPerSession // the prior's turns, as weights of per-turn means
	w.InputTokensPerTurn = (p.InputTokensPerTurn*pt + st.input) / (pt + st.turns)
	w.OutputTokensPerTurn = (p.OutputTokensPerTurn*pt + st.output) / (pt + st.turns)
	w.StraysPerTurn = p.StraysPerTurn // nothing unconstrained seen: the prior's
	if pt+st.strayTurns > 0 {
		w.StraysPerTurn = (p.StraysPerTurn*pt + st.strays) / (pt + st.strayTurns)
	}
	w.TokensPerLoad = p.TokensPerLoad
	if pl := k * p.LoadsPerSession; pl+st.loads > 0 {
		w.TokensPerLoad = (p.TokensPerLoad*pl + st.loadTokens) / (pl + st.loads)
	}
	return w
}

// priorDefaults fills the zero fields of a prior.
func priorDefaults(p Workload, cat CatalogSize) Workload {
	if p.TurnsPerSession <= 0 {
		p.TurnsPerSession = 8
	}
	if p.InputTokensPerTurn <= 0 {
		p.InputTokensPerTurn = 400
	}
	if p.OutputTokensPerTurn <= 0 {
		p.OutputTokensPerTurn = 100
	}
	if p.LoadsPerSession <= 0 {
		p.LoadsPerSession = 2
	}
	if p.TokensPerLoad <= 0 {
		p.TokensPerLoad = 300
		if cat.Tools > 0 {
			p.TokensPerLoad = 2 * float64(cat.Tokens) / float64(cat.Tools)
		}
	}
	if p.StraysPerTurn <= 0 {
		p.StraysPerTurn = 0.05
	}
	return p
}
