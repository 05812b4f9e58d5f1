package tenant

import "runtime"

// waitABit yields to the goroutines a test started; a loop around it waits for a state
// they reach, never for a duration.
func waitABit() { runtime.Gosched() }
