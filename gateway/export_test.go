package gateway

// UnscopeThreads makes s file every caller's threads together, as if no caller had an
// identity: the mutation TestIsolation_PropertyNothingCrossesIdentities must detect.
func UnscopeThreads(s *Server) { s.unscopedThreads = true }
