package ordered

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestOpenInOrder: results reach use in order of i whatever order the opens
// end in, and the opens overlap: open 0 ends only once open 1 has started,
// which one open at a time would never see.
func TestOpenInOrder(t *testing.T) {
	started1 := make(chan struct{})
	var got []int
	Open(context.Background(), 20, 4, func(ctx context.Context, i int) (int, error) {
		switch i {
		case 0:
			select {
			case <-started1:
			case <-time.After(10 * time.Second):
				return 0, errors.New("open 1 never started while open 0 ran")
			}
		case 1:
			close(started1)
		}
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		return i * i, nil
	}, func(i, v int, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		if v != i*i {
			t.Errorf("use(%d) got %d", i, v)
		}
		got = append(got, i)
		return true
	}, func(int) { t.Error("drop called though use never stopped") })
	for k, i := range got {
		if k != i {
			t.Fatalf("use saw %v", got)
		}
	}
	if len(got) != 20 {
		t.Fatalf("use saw %d results", len(got))
	}
}

// TestOpenStopsAndDrops: once use returns false, the opens still running
// see their context canceled, and every later open that succeeded is
// dropped: each success is used or dropped, exactly once.
func TestOpenStopsAndDrops(t *testing.T) {
	for _, workers := range []int{1, 3, 8} {
		var mu sync.Mutex
		succeeded := map[int]bool{}
		handled := map[int]int{}
		canceled := false
		Open(context.Background(), 12, workers, func(ctx context.Context, i int) (int, error) {
			if i == 4 && workers > 1 {
				// Runs past the stop: ends only when canceled.
				select {
				case <-ctx.Done():
					mu.Lock()
					canceled = true
					mu.Unlock()
					return 0, ctx.Err()
				case <-time.After(10 * time.Second):
					return i, nil
				}
			}
			if i == 2 {
				return 0, errors.New("open 2 fails")
			}
			mu.Lock()
			succeeded[i] = true
			mu.Unlock()
			return i, nil
		}, func(i, v int, err error) bool {
			if i > 2 {
				t.Errorf("workers %d: use(%d) after use returned false", workers, i)
			}
			if err != nil {
				return false
			}
			handled[v]++
			return true
		}, func(v int) { handled[v]++ })
		if workers > 1 && !canceled {
			t.Errorf("workers %d: the open running past the stop was not canceled", workers)
		}
		for i := range succeeded {
			if handled[i] != 1 {
				t.Errorf("workers %d: open %d succeeded and was used or dropped %d times", workers, i, handled[i])
			}
		}
	}
}
