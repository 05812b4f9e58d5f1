//go:build unix && !linux

package enginetest

import "syscall"

// procAttr puts ollama in its own process group, so one signal reaches its
// runners too. Only Linux can also tie its life to the test binary's.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
