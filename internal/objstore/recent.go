package objstore

import "sync"

// recentBlocks keeps the last few blocks read whole from the cache, for
// runs of small reads. Safe for concurrent use.
type recentBlocks struct {
	mu     sync.Mutex
	idx    [recentLen]int64
	data   [recentLen][]byte
	next   int
	filled int
}

// recentLen is how many blocks an Object keeps for small reads.
const recentLen = 16

func (r *recentBlocks) get(idx int64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.filled {
		if r.idx[i] == idx {
			return r.data[i]
		}
	}
	return nil
}

func (r *recentBlocks) put(idx int64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.idx[r.next], r.data[r.next] = idx, data
	r.next = (r.next + 1) % recentLen
	r.filled = min(r.filled+1, recentLen)
}
