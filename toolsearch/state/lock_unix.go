//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package state

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// lockDir takes an exclusive flock on path, creating it, and writes this process's id
// into it. Closing the file releases the lock; so does the process's end, however it
// ends.
func lockDir(path string) (*os.File, error) {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer fh.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := "another process"
			if b, rerr := os.ReadFile(path); rerr == nil {
				if pid, perr := strconv.Atoi(string(bytes.TrimSpace(b))); perr == nil {
					holder = "process " + strconv.Itoa(pid)
					if pid == os.Getpid() {
						holder = "this process"
					}
				}
			}
			return nil, fmt.Errorf("%w: %s holds the lock on %s", ErrLocked, holder, path)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := fh.Truncate(0); err == nil {
		fh.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return fh, nil
}
