package shared

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Invariant 2: the decision table of Need.
func TestVerdict(t *testing.T) {
	cases := []struct {
		root, file, required bool
		want                 string
	}{
		{true, true, false, ""},
		{true, true, true, ""},
		{false, true, false, ""}, // cannot happen, but the file wins
		{true, false, false, "fail"},
		{true, false, true, "fail"},
		{false, false, true, "fail"},
		{false, false, false, "skip"},
	}
	for _, c := range cases {
		act, msg := verdict(c.root, c.file, c.required, "ctf/x.ctf")
		if act != c.want {
			t.Errorf("root %v file %v required %v: %q, want %q", c.root, c.file, c.required, act, c.want)
		}
		if act != "" && !strings.Contains(msg, "ctf/x.ctf") {
			t.Errorf("message %q does not name the file", msg)
		}
	}
}

// Invariant 1, and invariant 2 where the data are present: Dir finds an
// existing file and Need returns it; a missing one is "".
func TestDirAndNeed(t *testing.T) {
	r, ok := root()
	if !ok {
		if Required() {
			t.Fatal("../shared/data is absent and CI requires it")
		}
		t.Skip("../shared/data is absent: nothing to locate")
	}
	if Dir("no", "such", "file") != "" {
		t.Error("Dir of a missing file is not empty")
	}
	if got := Dir(); got != r || !filepath.IsAbs(got) {
		t.Errorf("Dir() = %q, want %q", got, r)
	}
	p := Need(t, "README.md")
	if _, err := os.Stat(p); err != nil {
		t.Errorf("Need returned %q: %v", p, err)
	}
}
