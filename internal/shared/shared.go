// Package shared locates the project's shared test and benchmark data
// (../shared/data beside the module root) for tests in any package.
//
// Invariants (tests cite them by number):
//
//  1. Dir(rel...) is the absolute path of ../shared/data/rel beside the
//     module root when it exists, else "".
//  2. Need never lets a missing file pass silently in CI: when
//     ../shared/data exists, a missing file fails the test (a wrong path or
//     an incomplete copy, not an absent data set); when ../shared/data is
//     absent the test skips with a message, or fails when the environment
//     says CI=true (or BATCHPREP_REQUIRE_SHARED=1), so a CI run that should
//     have the data cannot pass with everything skipped.
package shared

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// root returns ../shared/data beside the module root (the nearest directory
// above the working directory holding go.mod), and whether it exists.
func root() (string, bool) {
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "..", "shared", "data")
			_, err := os.Stat(p)
			return p, err == nil
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// Dir returns the absolute path of ../shared/data/<rel...> relative to the
// module root, or "" when it does not exist.
func Dir(rel ...string) string {
	r, ok := root()
	if !ok {
		return ""
	}
	p := filepath.Join(append([]string{r}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// verdict says what Need does: "" (use the file), "skip" or "fail", with
// the message.
func verdict(rootExists, fileExists, required bool, rel string) (string, string) {
	switch {
	case fileExists:
		return "", ""
	case rootExists:
		return "fail", fmt.Sprintf("shared data %s is missing although ../shared/data exists: a wrong path or an incomplete copy", rel)
	case required:
		return "fail", fmt.Sprintf("shared data %s is absent (no ../shared/data beside the module root) and CI requires it", rel)
	}
	return "skip", fmt.Sprintf("shared data %s is absent (expected ../shared/data beside the module root): skipping", rel)
}

// Required tells whether the environment demands the shared test inputs
// (CI=true or BATCHPREP_REQUIRE_SHARED=1): a test that would skip for a
// missing input fails instead. Other harnesses (internal/duckdbtest) follow
// the same rule.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("BATCHPREP_REQUIRE_SHARED") == "1"
}

// Need returns Dir(rel...), or skips or fails the test (or benchmark) as
// invariant 2 says, with a message naming what is missing.
func Need(tb testing.TB, rel ...string) string {
	tb.Helper()
	p := Dir(rel...)
	_, rootOK := root()
	switch act, msg := verdict(rootOK, p != "", Required(), filepath.Join(rel...)); act {
	case "fail":
		tb.Fatal(msg)
	case "skip":
		tb.Skip(msg)
	}
	return p
}
