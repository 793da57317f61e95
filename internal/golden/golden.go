// Package golden pins test output to files in testdata/. Golden files are
// never edited by hand: "go test -run NAME -update" rewrites them from the
// current code, to be reviewed and committed only for an intended change.
// It registers the -update flag, so a test package that imports it must not
// define its own.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current code")

// Check compares got with testdata/name; with -update it writes got there
// instead. A difference fails the test, naming the first differing line.
func Check(tb testing.TB, name, got string) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		tb.Logf("rewrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (create it with go test -run '%s' -update)", err, tb.Name())
	}
	if got == string(want) {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			tb.Fatalf("%s: line %d differs (do not edit the file; rerun with -update after review):\n got %s\nwant %s", path, i+1, gl[i], wl[i])
		}
	}
	tb.Fatalf("%s: %d lines, want %d (rerun with -update after review)", path, len(gl), len(wl))
}
