package ordered

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestRunInOrder: results come in job order whatever order the jobs end
// in, no more than 2 x workers jobs run ahead of the caller, and a false
// from use stops the jobs not started.
func TestRunInOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 5} {
		var started, used atomic.Int64
		var seen []int
		Run(100, workers, func(i int) int {
			if ahead := started.Add(1) - used.Load(); ahead > int64(2*workers)+1 {
				t.Errorf("%d workers: %d jobs started ahead of the caller", workers, ahead)
			}
			time.Sleep(time.Duration((i*7)%5) * 100 * time.Microsecond)
			return i * i
		}, func(i, v int) bool {
			used.Add(1)
			if v != i*i {
				t.Fatalf("job %d: result %d", i, v)
			}
			seen = append(seen, i)
			return i < 60
		})
		if len(seen) != 61 || seen[60] != 60 {
			t.Fatalf("%d workers: used %d results, want 0..60 in order", workers, len(seen))
		}
		if s := started.Load(); s > 61+int64(2*workers)+1 {
			t.Errorf("%d workers: %d jobs started after the stop at 60", workers, s)
		}
	}
}
