package miniotest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcessCPU is the CPU time (user and system) process pid has used, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s: Linux's
// USER_HZ on every architecture Go supports).
func ProcessCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	return statCPU(b)
}

// statCPU reads the CPU time from the contents of a /proc/PID/stat file.
func statCPU(b []byte) (time.Duration, bool) {
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from after its closing one (field 3 on).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}
