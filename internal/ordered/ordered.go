// Package ordered runs a sequence of independent jobs on several
// goroutines and hands their results to the caller in job order, with a
// bounded number of results waiting: a pass over a file's pieces or row
// groups that joins them in order then holds a few pieces' results, not
// the file's, and gets the same result whatever the timing.
package ordered

import "sync"

// Run calls work(i) for i = 0..n-1 on up to workers goroutines, at most
// 2 x workers jobs ahead of the caller, and use(i, result) on the caller's
// goroutine in order of i. It stops starting jobs once use returns false,
// and returns when the jobs started have ended.
func Run[T any](n, workers int, work func(i int) T, use func(i int, v T) bool) {
	if n == 0 {
		return
	}
	workers = max(1, min(workers, n))
	results := make([]chan T, n)
	for i := range results {
		results[i] = make(chan T, 1)
	}
	tickets := make(chan struct{}, 2*workers)
	next, quit := make(chan int), make(chan struct{})
	go func() {
		defer close(next)
		for i := range n {
			select {
			case tickets <- struct{}{}:
			case <-quit:
				return
			}
			select {
			case next <- i:
			case <-quit:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				results[i] <- work(i)
			}
		})
	}
	defer func() {
		close(quit)
		wg.Wait()
	}()
	for i := range n {
		v := <-results[i]
		<-tickets
		if !use(i, v) {
			return
		}
	}
}
