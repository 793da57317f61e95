package cli

import (
	"os"
	"testing"
)

// childEnv, when set in the environment, makes the test binary run
// batchprep itself (Main with the binary's arguments) instead of the tests:
// the signal and crash tests start it as a real child process.
const childEnv = "BATCHPREP_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
