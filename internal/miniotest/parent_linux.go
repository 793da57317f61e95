package miniotest

import "syscall"

// dieWithParent asks the kernel to kill the server when the test process
// dies, so that a crashed test leaves no server behind.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
