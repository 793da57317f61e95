package cli

import "golang.org/x/sys/unix"

// physicalMemory returns the machine's RAM in bytes (0 when unknown).
func physicalMemory() uint64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return n
}
