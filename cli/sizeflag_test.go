package cli

import "testing"

func TestSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"32MiB": 32 << 20, "1048576": 1 << 20, "1KiB": 1024, "3GiB": 3 << 30, "1000": 1000} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "1.5MiB", "12XB", "99999999999GiB", "-"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
	if s := formatSize(32 << 20); s != "32MiB" {
		t.Errorf("formatSize(32MiB) = %q", s)
	}
}

// FuzzParseSize: parseSize never panics, and what it accepts prints (with
// formatSize) to a form that parses back to the same count.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"32MiB", "0", "1", "-5KiB", "4611686018427387904", "4GiB", "1KiBKiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			return
		}
		back, err := parseSize(formatSize(n))
		if err != nil || back != n {
			t.Fatalf("%q = %d prints as %q, which parses to %d, %v", s, n, formatSize(n), back, err)
		}
	})
}
