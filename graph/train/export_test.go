package train

import (
	"os"
	"strconv"
	"syscall"
)

// KillWriteBehindEnv, set to n in a child test process, makes the process
// SIGKILL itself in the n-th write behind that holds a partition, once the
// partition's file is durable and before the model file and the manifest
// (TestKillDuringWriteBehind).
const KillWriteBehindEnv = "BATCHPREP_KILL_WRITE_BEHIND"

func init() {
	n, _ := strconv.Atoi(os.Getenv(KillWriteBehindEnv))
	if n <= 0 {
		return
	}
	seen := 0
	writeBehindHook = func() {
		if seen++; seen == n {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
