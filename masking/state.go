package masking

import (
	"errors"
	"fmt"
)

// ErrDisallowed is wrapped by State.Accept for a token the mask does not allow.
var ErrDisallowed = errors.New("token not allowed")

// Phase is where a State stands in the wire format.
type Phase int

const (
	// PhaseText is free text (possibly inside a partial trigger).
	PhaseText Phase = iota
	// PhaseTrigger is required mode before the trigger is complete.
	PhaseTrigger
	// PhaseName is between the trigger and the end of NameClose: constrained.
	PhaseName
	// PhaseArguments is after NameClose until the end marker.
	PhaseArguments
)

func (p Phase) String() string {
	return [...]string{"text", "trigger", "name", "arguments"}[p]
}

// State follows one generation through a Mask. It is not safe for concurrent
// use; the Mask it reads is. The zero value is not usable: see Mask.NewState.
type State struct {
	m *Mask
	s int32
}

// NewState starts a generation: in ModeAuto in free text, otherwise at the
// trigger.
func (m *Mask) NewState() State { return State{m: m, s: m.start()} }

// Reset returns st to the start of a generation.
func (st *State) Reset() { st.s = st.m.start() }

// Allowed returns the tokens allowed at this step. The set is shared and
// read-only; if Allowed().All(), the step is unconstrained.
func (st *State) Allowed() *Set { return st.m.set(st.s) }

// Accept advances past token id. A token that Allowed does not contain is
// refused with an error wrapping ErrDisallowed, and the state is unchanged.
func (st *State) Accept(id int) error {
	_, err := st.AcceptCall(id)
	return err
}

// AcceptCall is Accept that also says whether token id starts a call: it
// completes the format's trigger (in free text, or Lead and Trigger where a
// call is required). after is how many of the token's bytes come after the
// trigger, the call's first bytes, or -1 when the token starts no call. An
// engine that follows the call's arguments with a grammar (CallGBNF) starts
// it there.
func (st *State) AcceptCall(id int) (after int, err error) {
	s, after, ok := st.m.stepTokenAt(st.s, id)
	if !ok {
		e := &disallowedError{id: id, n: st.m.ix.n, phase: st.Phase()}
		if id >= 0 && id < st.m.ix.n {
			e.piece = st.m.ix.pieces[id]
		}
		return -1, e
	}
	st.s = s
	return after, nil
}

// disallowedError is Accept's refusal. Its message is formatted only when asked
// for: a caller probing tokens (is this one allowed?) gets a refusal for most of
// them and reads none of the messages, and formatting each one cost more than
// the step itself.
type disallowedError struct {
	id, n int
	piece []byte // nil outside the vocabulary; the Index's, read-only
	phase Phase
}

func (e *disallowedError) Error() string {
	if e.id < 0 || e.id >= e.n {
		return fmt.Sprintf("masking: token %d outside vocabulary of %d: %v", e.id, e.n, ErrDisallowed)
	}
	return fmt.Sprintf("masking: token %d (%q) in phase %s: %v", e.id, e.piece, e.phase, ErrDisallowed)
}

func (e *disallowedError) Unwrap() error { return ErrDisallowed }

// Phase says where st stands.
func (st *State) Phase() Phase {
	m := st.m
	switch {
	case st.s < m.reqBase:
		return PhaseText
	case st.s < m.fixedBase:
		return PhaseTrigger
	case st.s < m.argsBase:
		return PhaseName
	}
	return PhaseArguments
}
