package backends

// StaleConn is staleConn, for the external tests.
var StaleConn = staleConn
