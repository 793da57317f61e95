package miniotest

import (
	"testing"
	"time"
)

func TestStatCPU(t *testing.T) {
	for _, c := range []struct {
		stat string
		want time.Duration
		ok   bool
	}{
		// utime 250 and stime 75 ticks: 3.25 s.
		{"4242 (minio) S 1 4242 4242 0 -1 4194560 9000 0 3 0 250 75 0 0 20 0 12 0 100 1000 200", 3250 * time.Millisecond, true},
		// A command name with spaces and a parenthesis of its own.
		{"7 (a b) (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 6 7", 70 * time.Millisecond, true},
		{"7 (cut short) R 1 7", 0, false},
		{"no parenthesis at all", 0, false},
		{"7 (x) R 1 7 7 0 -1 0 0 0 0 0 lots 4 0", 0, false},
	} {
		got, ok := statCPU([]byte(c.stat))
		if got != c.want || ok != c.ok {
			t.Errorf("statCPU(%q) = %v, %v; want %v, %v", c.stat, got, ok, c.want, c.ok)
		}
	}
}
