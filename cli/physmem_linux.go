package cli

import "syscall"

// physicalMemory returns the machine's RAM in bytes (0 when unknown).
func physicalMemory() uint64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
