package source

import "testing"

// TestMemoryLimit: the limit is the bound (window + 64 MiB) minus the
// process reserve (8 MiB) while the index leaves room under it, and follows
// the index when it does not, never dropping below index + window + 16 MiB.
func TestMemoryLimit(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct{ heap, window, want int64 }{
		{0, 32 * MiB, 88 * MiB},
		{25 * MiB, 32 * MiB, 88 * MiB},
		{40 * MiB, 32 * MiB, 88 * MiB},
		{41 * MiB, 32 * MiB, 89 * MiB},
		{500 * MiB, 32 * MiB, 548 * MiB},
		{0, 0, 56 * MiB},
	} {
		got := MemoryLimit(c.heap, c.window)
		if got != c.want {
			t.Errorf("MemoryLimit(%d MiB, %d MiB) = %d MiB, want %d MiB", c.heap/MiB, c.window/MiB, got/MiB, c.want/MiB)
		}
		if got < c.heap+c.window+Headroom/4 {
			t.Errorf("MemoryLimit(%d, %d) = %d leaves under 16 MiB above the live data", c.heap, c.window, got)
		}
	}
}
