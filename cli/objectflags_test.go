package cli

import (
	"strings"
	"testing"
)

// TestObjectFlagsRefuseNonPositive: every command that reads objects
// refuses, as a usage error naming the flag, an object flag of 0 or less
// (objstore would read 0 as its default) or one that does not parse.
func TestObjectFlagsRefuseNonPositive(t *testing.T) {
	for _, c := range []struct {
		flag, value, want string
	}{
		{"--fetch-concurrency", "0", `--fetch-concurrency "0": must be at least 1`},
		{"--fetch-concurrency", "-2", `--fetch-concurrency "-2": must be at least 1`},
		{"--fetch-concurrency", "many", `--fetch-concurrency "many": want a whole number`},
		{"--fetch-timeout", "0s", `--fetch-timeout "0s": must be positive`},
		{"--fetch-timeout", "-1m", `--fetch-timeout "-1m": must be positive`},
		{"--fetch-timeout", "soon", `--fetch-timeout "soon": want a duration`},
		{"--cache-bytes", "0", `--cache-bytes "0": must be positive`},
		{"--cache-bytes", "-5MiB", `--cache-bytes "-5MiB": must be positive`},
		{"--cache-bytes", "lots", `--cache-bytes "lots": want a byte count`},
	} {
		for _, cmd := range []string{"read", "inspect", "convert", "import", "serve"} {
			code, out, errOut := run(t, cmd, c.flag, c.value)
			if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("%s %s %s: code %d, stdout %q, stderr %q; want code 2 and %q", cmd, c.flag, c.value, code, out, errOut, c.want)
			}
		}
	}
	// The values the flags take are kept.
	for _, v := range []string{"1", "64"} {
		if code, _, errOut := run(t, "read", "--fetch-concurrency", v); strings.Contains(errOut, "--fetch-concurrency") {
			t.Errorf("read --fetch-concurrency %s refused: code %d, %s", v, code, errOut)
		}
	}
}
