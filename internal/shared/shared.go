// Package shared locates the project's shared test and benchmark data
// (../shared/data beside the module root) for tests in any package.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of ../shared/data/<rel...> relative to the
// module root (the nearest directory above the working directory holding
// go.mod), or "" when it does not exist.
func Dir(rel ...string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(append([]string{d, "..", "shared", "data"}, rel...)...)
			if _, err := os.Stat(p); err != nil {
				return ""
			}
			return p
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Need returns Dir(rel...) or skips the test (or benchmark) with a message
// saying what is missing, so an absent data set never passes silently.
func Need(tb testing.TB, rel ...string) string {
	tb.Helper()
	p := Dir(rel...)
	if p == "" {
		tb.Skipf("shared data %s is absent (expected ../shared/data beside the module root): skipping", filepath.Join(rel...))
	}
	return p
}
