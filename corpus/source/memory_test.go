package source

import "testing"

// TestMemoryLimit: the limit is the bound (window + 64 MiB) minus the
// process reserve (8 MiB) while the index leaves room under it, and follows
// the index when it does not, never dropping below the live data (index and
// window) + a quarter of them, or + 16 MiB when that is more.
func TestMemoryLimit(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct{ heap, window, want int64 }{
		{0, 32 * MiB, 88 * MiB},
		{25 * MiB, 32 * MiB, 88 * MiB},
		{38 * MiB, 32 * MiB, 88 * MiB},
		{40 * MiB, 32 * MiB, 90 * MiB},
		{45 * MiB, 32 * MiB, 96*MiB + MiB/4},
		{500 * MiB, 32 * MiB, 665 * MiB},
		{0, 0, 56 * MiB},
	} {
		got := MemoryLimit(c.heap, c.window)
		if got != c.want {
			t.Errorf("MemoryLimit(%d MiB, %d MiB) = %d MiB, want %d MiB", c.heap/MiB, c.window/MiB, got/MiB, c.want/MiB)
		}
		if live := c.heap + c.window; got < live+max(Headroom/4, live/4) {
			t.Errorf("MemoryLimit(%d, %d) = %d leaves under a quarter of the live data above it", c.heap, c.window, got)
		}
	}
}

// TestRaiseLimit: a limit that leaves the live data a quarter of their size
// (at least 16 MiB) stays; one that leaves less is raised to the live data
// and half of them (at least 16 MiB more), never lowered.
func TestRaiseLimit(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct{ limit, live, want int64 }{
		{248 * MiB, 100 * MiB, 248 * MiB},
		{248 * MiB, 200 * MiB, 300 * MiB},
		{88 * MiB, 70 * MiB, 88 * MiB},
		{88 * MiB, 72 * MiB, 108 * MiB},
		{40 * MiB, 10 * MiB, 40 * MiB},
		{20 * MiB, 10 * MiB, 26 * MiB},
		{1500 * MiB, 1200 * MiB, 1500 * MiB},
		{1500 * MiB, 1300 * MiB, 1950 * MiB},
	} {
		if got := RaiseLimit(c.limit, c.live); got != c.want {
			t.Errorf("RaiseLimit(%d MiB, %d MiB) = %.2f MiB, want %.2f MiB", c.limit/MiB, c.live/MiB, float64(got)/MiB, float64(c.want)/MiB)
		}
	}
}
