package miniotest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBuildMinio finds or builds the pinned server (invariant 1); .ci/run
// runs it on its own, before the other tests, so the build is timed apart.
func TestBuildMinio(t *testing.T) {
	bin := Binary(t)
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	if !strings.Contains(string(out), "minio version") {
		t.Fatalf("%s --version printed %q", bin, out)
	}
}
