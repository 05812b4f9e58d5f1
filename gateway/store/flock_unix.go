//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package store

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f without waiting. The lock belongs to the open
// file: a second open of the same path, in this process or another, cannot take it.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
