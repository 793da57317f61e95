package cli

import (
	"strings"
	"testing"
)

// The demo checks its own claims (resume and worker union equal the
// uninterrupted run) and fails otherwise; this runs it end to end.
func TestDemo(t *testing.T) {
	code, out, errOut := run(t, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d\nstderr: %s\nstdout: %s", code, errOut, out)
	}
	for _, want := range []string{"Part 1", "identical to the run above: true", "union = step 0 above: true",
		"Part 2", "byte-for-byte the uninterrupted plan", "partition loads", "Part 3", "filtered test MRR"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	if strings.Contains(out, ": false") {
		t.Errorf("demo reports a failed check:\n%s", out)
	}
}
