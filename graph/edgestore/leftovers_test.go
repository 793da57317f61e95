package edgestore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Invariant 8: after a crash at any step, the staging directories a killed
// process leaves behind (made here by hand: the test's Writer is aborted by
// its helper, a killed one is not; the SIGKILL harness in cli kills real
// imports) are listed by Leftovers and removed by the next successful
// import; the store then opens with the new data.
func TestLeftoversOfACrashAreRemovedByTheNextImport(t *testing.T) {
	for _, step := range allSteps(t, 2, 2) {
		dir := t.TempDir()
		c := testConfig(t, dir, 2, 2)
		if _, err := writeStore(t, c, 8, false, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err := writeStore(t, c, 9, false, WriteOptions{Hook: func(s string) error {
			if s == step {
				return errSimulatedCrash
			}
			return nil
		}})
		if !errors.Is(err, errSimulatedCrash) {
			t.Fatalf("step %s: %v", step, err)
		}
		for _, p := range []string{c.EntityPath, c.EdgePaths[0], c.EdgePaths[1]} {
			for _, infix := range []string{tmpInfix, oldInfix} {
				d := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+infix+"killed")
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(d, "edges_0_0.bin"), []byte("stale"), 0o644)
			}
		}
		left, err := Leftovers(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) < 6 {
			t.Errorf("step %s: Leftovers lists %d directories, want at least the 6 made: %v", step, len(left), left)
		}
		for _, d := range left {
			if !strings.Contains(filepath.Base(d), ".batchprep-") {
				t.Errorf("step %s: %s listed as a leftover", step, d)
			}
		}
		newer, err := writeStore(t, c, 10, false, WriteOptions{})
		if err != nil {
			t.Fatalf("step %s: re-import: %v", step, err)
		}
		checkStore(t, c, newer)
		if again, _ := Leftovers(c); len(again) != 0 {
			t.Errorf("step %s: after a successful import still %v", step, again)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("step %s: %s still there after the re-import", step, e.Name())
			}
		}
	}
}

// Invariant 7: the store's directories are 0755 and files 0644 (with the
// umask cleared for the test), so other users can read it.
func TestStoreModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	c := testConfig(t, dir, 2, 2)
	if _, err := writeStore(t, c, 1, false, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range append([]string{c.EntityPath}, c.EdgePaths...) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want 0755", p, fi.Mode().Perm())
		}
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			fi, _ := e.Info()
			if fi.Mode().Perm() != 0o644 {
				t.Errorf("%s/%s: mode %v, want 0644", p, e.Name(), fi.Mode().Perm())
			}
		}
	}
}
