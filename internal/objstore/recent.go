package objstore

import "sync"

// recentPieces keeps the pieces last read from cache files for small
// reads (a Parquet page, a footer), which come in runs through the same
// piece. Safe for concurrent use.
type recentPieces struct {
	mu     sync.Mutex
	slot   map[int64]int // a piece's key: its slot
	key    [recentLen]int64
	data   [recentLen][]byte
	next   int
	filled int
}

// recentLen is how many pieces an Object keeps for small reads (at most 16
// MiB).
const recentLen = 256

// pieceKey names piece p of block idx among an Object's pieces.
func (o *Object) pieceKey(idx, p int64) int64 {
	return idx*(o.opt.blockSize/pieceLen+1) + p
}

func (r *recentPieces) get(key int64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := r.slot[key]; ok {
		return r.data[i]
	}
	return nil
}

func (r *recentPieces) put(key int64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.slot[key]; ok {
		return // another reader put it meanwhile
	}
	if r.slot == nil {
		r.slot = make(map[int64]int, recentLen)
	}
	if r.filled == recentLen {
		delete(r.slot, r.key[r.next])
	}
	r.key[r.next], r.data[r.next] = key, data
	r.slot[key] = r.next
	r.next = (r.next + 1) % recentLen
	r.filled = min(r.filled+1, recentLen)
}
