package ctf

import "sync"

// DropSpares lets the collector have what the Reader keeps for reuse
// between loads: its chunk read buffers, the chunks handed back by
// Recycle and the parsers' scratch arrays. A reader kept open while no one
// reads it (a server's cache of indexed files) calls it so that it holds
// only its index; later loads allocate afresh. It is safe to call while
// other goroutines load chunks.
func (r *Reader) DropSpares() {
	r.bufs.drop()
	drain(r.spare)
	r.scratch.drop()
}

// hot is a bounded pool that hands out what was put back last: the
// arrays most likely still in the processor's cache. A chunk read into a
// buffer parsed a moment ago writes over lines the cache holds, where the
// oldest of several buffers (a channel's order) has been pushed out by the
// reads and copies since, in window order most of all.
type hot[T any] struct {
	mu    sync.Mutex
	items []T
	max   int
}

func newHot[T any](max int) *hot[T] { return &hot[T]{max: max} }

// take returns the item put back last, or ok=false when there is none.
func (h *hot[T]) take() (x T, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.items); n > 0 {
		var zero T
		x, h.items[n-1] = h.items[n-1], zero
		h.items = h.items[:n-1]
		return x, true
	}
	return x, false
}

// put keeps x unless the pool is full.
func (h *hot[T]) put(x T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.items) < h.max {
		h.items = append(h.items, x)
	}
}

// drop lets the collector have every item.
func (h *hot[T]) drop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.items)
	h.items = h.items[:0]
}

// drain empties c without blocking.
func drain[T any](c chan T) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
