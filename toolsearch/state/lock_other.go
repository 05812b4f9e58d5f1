//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package state

import (
	"fmt"
	"os"
	"runtime"
)

// lockDir fails: the file store needs flock, which this system lacks.
func lockDir(path string) (*os.File, error) {
	return nil, fmt.Errorf("the file store is not supported on %s (it locks its directory with flock)", runtime.GOOS)
}
