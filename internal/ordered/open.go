package ordered

import (
	"context"
	"sync"
)

// Open calls open(ctx, i) for i = 0..n-1 on up to workers goroutines,
// lower i first, and use(i, v, err) with each result on the caller's
// goroutine in order of i, so that what use does (report warnings, keep
// readers, return the first error) happens as if the opens had run one
// after the other. Once use returns false, the context of the opens still
// running is canceled, no more start, and drop(v) is called for each later
// open that succeeded all the same (err == nil), so nothing it opened
// leaks. Open returns when every open started has ended.
//
// It is for opens that wait more than they compute (objects in a store:
// a HEAD and a footer, round trips each), which then overlap.
func Open[T any](ctx context.Context, n, workers int, open func(ctx context.Context, i int) (T, error),
	use func(i int, v T, err error) bool, drop func(v T)) {
	if n == 0 {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	results := make([]chan result, n)
	for i := range results {
		results[i] = make(chan result, 1)
	}
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range max(1, min(workers, n)) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					var zero T
					results[i] <- result{zero, ctx.Err()}
					continue
				}
				v, err := open(ctx, i)
				results[i] <- result{v, err}
			}
		})
	}
	i := 0
	for ; i < n; i++ {
		r := <-results[i]
		if !use(i, r.v, r.err) {
			i++
			break
		}
	}
	cancel()
	wg.Wait()
	for ; i < n; i++ {
		if r := <-results[i]; r.err == nil {
			drop(r.v)
		}
	}
}
