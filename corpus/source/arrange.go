package source

import (
	"slices"

	"github.com/batchprep/batchprep/corpus"
)

// Arranged chunks.
//
// A window order delivers each minibatch from dozens of chunks, a few
// sequences from each, and a chunk's sequences in a random order: read in
// the layout the parser wrote, every sequence of every stream is a cache
// miss of its own (about eight per ATIS sequence), in chunks too many to
// stay in the processor's cache. When the randomizer can tell in advance in
// which order a sweep visits each chunk's sequences (randomize.VisitOrder),
// the cache lays a chunk out in that order as it loads it (on the loading
// goroutine, while the chunk is still in cache from its parse): the
// sequences the reader takes from a chunk one after the other are then
// side by side, and each cache line it loads serves the next visits to
// that chunk too.
//
// The arrangement changes where a sequence's data is, never what it is:
// arranged sequence k is the chunk's sequence order[k], and pos[i] says
// where sequence i went, so an assembly finds any sequence whichever sweep
// the arrangement was made for (a chunk resident across a sweep boundary
// is read in the next sweep's order from the previous sweep's layout: it
// is slower, never wrong). Chunks of more than warmLimit bytes keep their
// file layout, for memory (chunkCache.arrange).

// arrangement is how a chunk is laid out: its k-th sequence is sequence
// order[k] of the file's chunk, and sequence i is at pos[i].
type arrangement struct {
	order, pos []int32
	// next is where the sequence after the last one found is: the next
	// one the sweep visits, when the reader follows the order it was
	// arranged for. Only the reader's goroutine uses it.
	next int32
	// slow counts the sequences found through pos (for tests).
	slow int32
}

// find returns where sequence i (chunk-relative, file order) is. When the
// reader follows the order the chunk was arranged for, i is at next, and
// find reads order[next], the line it read for the previous visit, instead
// of pos[i], a random place of pos: a cache miss per sequence saved. Any
// other visit (another sweep's order, a rank's share, a seek) finds i
// through pos.
func (a *arrangement) find(i int) int {
	k := int(a.next)
	if k >= len(a.order) || int(a.order[k]) != i {
		k = int(a.pos[i])
		a.slow++
	}
	a.next = int32(k + 1)
	return k
}

// arrange lays src out in order (corpus.Arrange), into dst's arrays when
// they are large enough, and returns it with pos, order's inverse
// (pos[order[k]] = k), written into pos's array when it is long enough.
func arrange(dst, src *corpus.Chunk, order, pos []int32) (*corpus.Chunk, []int32) {
	return corpus.Arrange(dst, src, order), inverse(order, pos)
}

// inverse returns pos with pos[order[k]] = k, in pos's array when it is
// long enough.
func inverse(order, pos []int32) []int32 {
	pos = slices.Grow(pos[:0], len(order))[:len(order)]
	for k, i := range order {
		pos[i] = int32(k)
	}
	return pos
}
