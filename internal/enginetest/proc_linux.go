package enginetest

import "syscall"

// procAttr puts ollama in its own process group, so one signal reaches its
// runners too, and has the kernel kill it if the test binary dies without
// running cleanups (a -timeout panic), so no server outlives its test.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
