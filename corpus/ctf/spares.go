package ctf

import "github.com/batchprep/batchprep/corpus"

// DropSpares lets the collector have what the Reader keeps for reuse
// between loads: its chunk read buffers, the chunks handed back by
// Recycle and the parsers' scratch arrays. A reader kept open while no one
// reads it (a server's cache of indexed files) calls it so that it holds
// only its index; later loads allocate afresh. It is safe to call while
// other goroutines load chunks.
func (r *Reader) DropSpares() {
	drain(r.bufs)
	drain(r.spare)
	drain(r.scratch)
}

// drain empties c without blocking.
func drain[T []byte | *corpus.Chunk](c chan T) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
