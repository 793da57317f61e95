package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --randomize cntk without a chunk flag reads in CNTK's
// 32 MiB chunks, so that the order is CNTK's; window and none keep 1 MiB.
// The corpus is 2.5 MiB, three chunks at 1 MiB and one at 32 MiB; the two
// sizes give the same first sweep but different second ones (as on ATIS),
// so the test reads from the start of the second sweep.
func TestReadCNTKChunkDefault(t *testing.T) {
	var b strings.Builder
	lines := 0
	for ; b.Len() < 5<<19; lines++ {
		fmt.Fprintf(&b, "%d |x %d %d\n", lines, lines%97, lines%89)
	}
	p := filepath.Join(t.TempDir(), "big.ctf")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(args ...string) string {
		t.Helper()
		args = append([]string{"read", p, "--stream", "x:2", "--mb", "64", "--max-minibatches", "4", "--quiet", "--seed", "3",
			"--epochs", "2", "--start", fmt.Sprint(lines)}, args...)
		code, out, errOut := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	implicit := read("--randomize", "cntk")
	if big := read("--randomize", "cntk", "--chunk-bytes", "32MiB"); implicit != big {
		t.Errorf("--randomize cntk does not default to --chunk-bytes 32MiB:\n%.300s\n%.300s", implicit, big)
	}
	if small := read("--randomize", "cntk", "--chunk-bytes", "1MiB"); implicit == small {
		t.Errorf("--randomize cntk gives the same order at 1MiB and 32MiB chunks; the test cannot see the default")
	}
	for _, kind := range []string{"window", "none"} {
		if read("--randomize", kind) != read("--randomize", kind, "--chunk-bytes", "1MiB") {
			t.Errorf("--randomize %s does not default to --chunk-bytes 1MiB", kind)
		}
	}
	if read("--randomize", "window") == read("--randomize", "window", "--chunk-bytes", "32MiB") {
		t.Errorf("--randomize window gives the same order at 1MiB and 32MiB chunks; the test cannot see the default")
	}
}
