//go:build !linux

package miniotest

import "syscall"

// dieWithParent has no kernel support here: a crashed test may leave its
// server running until the machine's next cleanup.
func dieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
