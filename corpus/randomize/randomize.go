// Package randomize turns a corpus Layout and a sweep number into the order
// in which that sweep visits the sequences. Orders are pure functions of
// (config, layout, sweep): nothing is stored between sweeps, and a cursor can
// be placed at any sample offset of any sweep.
//
// Kinds:
//
//	none    file order, every sweep
//	cntk    CNTK's block randomizer, reproduced exactly (seek costs O(sweep))
//	window  the default: chunks uniformly shuffled per sweep, sequences
//	        uniformly shuffled inside windows of consecutive chunks; seek
//	        costs at most one window of work
package randomize

import (
	"fmt"

	"github.com/batchprep/batchprep/corpus"
)

// Config selects and parameterizes a randomizer. It is part of the
// checkpoint fingerprint: changing any field changes the order.
type Config struct {
	Kind string // "none", "cntk" or "window"
	Seed uint64
	// Exactly one window size is used: WindowSamples when > 0, otherwise
	// WindowChunks (default 128, as CNTK).
	WindowChunks  int
	WindowSamples uint64
}

// Randomizer yields sweep orders.
type Randomizer interface {
	// Sweep returns the order of sweep s.
	Sweep(s uint64) Sweep
	// MaxResidentChunks bounds the number of distinct chunks a reader moving
	// forward through a sweep needs at once (the window plus the chunk being
	// entered). Readers size their chunk cache with it.
	MaxResidentChunks() int
}

// Sweep is one sweep's order.
type Sweep interface {
	// Seek returns a cursor at the first sequence (in this sweep's order)
	// whose first sample is at sweep offset >= off, and that sequence's
	// offset. An offset inside a sequence thus moves to the next boundary.
	// off may equal the sweep size, giving an exhausted cursor.
	Seek(off uint64) (Cursor, uint64)
	// LabelsBefore returns the sum of the label counts of the sequences that
	// come, in this sweep's order, before the one Seek(off) returns (all of
	// the sweep's labels when off is past the last sequence's start). Epoch
	// arithmetic uses it; it costs at most the work of one window.
	LabelsBefore(off uint64) uint64
}

// ChunkLookahead is implemented by randomizers whose next chunk is known in
// advance and needed alone: file order (none). A reader loads it while it
// works on the current chunk; it never changes an order. The window
// randomizer does not implement it: a window's chunks are all needed from
// its first minibatch on, so the reader loads them together when it gets
// there (source's parallel window load), and a chunk fetched earlier would
// take one of the cache's few spare places.
type ChunkLookahead interface {
	// ChunkAfter returns the chunk sweep s enters after chunk c, or
	// ok=false when c is the sweep's last.
	ChunkAfter(s uint64, c int) (next int, ok bool)
}

// WindowLookahead is implemented by randomizers that visit a sweep window
// by window (window): the chunks of the next window are known while the
// current one is read, and a reader may parse them ahead, in places of its
// cache kept for them. It never changes an order.
type WindowLookahead interface {
	// Windows returns the file chunks of the window of sweep s holding chunk
	// c and those of the window the sweep visits after it (nil when c's is
	// the last), each in placed order. The slices are shared: callers must
	// not modify them.
	Windows(s uint64, c int) (cur, next []int32)
}

// Cursor walks a sweep's order forward.
type Cursor interface {
	// Next returns the ordinal of the next sequence, or ok=false at the end
	// of the sweep.
	Next() (seq int, ok bool)
	// NextN fills dst with the next ordinals and returns how many it wrote:
	// len(dst), or fewer only when the sweep ends. It yields exactly what
	// as many calls of Next would, with one call per batch.
	NextN(dst []int) int
}

// RankedCursor is implemented by Cursors that can tell where each sequence
// they yield is in an arrangement of its chunk in its sweep's visit order
// (VisitOrder): its rank among the chunk's sequences in that order. A
// reader finds a sequence of a chunk so arranged at its rank, without a
// lookup in the chunk.
type RankedCursor interface {
	Cursor
	// NextRanked is NextN that also sets ranks[i] (len(ranks) >= len(dst))
	// to the rank of dst[i], or -1 when the cursor does not know it.
	NextRanked(dst []int, ranks []int32) int
}

// SharedVisits is implemented by VisitOrders whose cursors can read each
// window's order from the visit orders (computing it there, once, when it
// is not yet) instead of shuffling the window on their own. A reader that
// asks for every window's visit order anyway, to arrange the chunks it
// loads, calls ShareVisits before it makes a cursor: each window is then
// shuffled once, not twice, and its cursors know every sequence's rank
// (RankedCursor). A Seek then computes its window's whole order, still
// O(window).
type SharedVisits interface {
	VisitOrder
	ShareVisits()
}

// New builds the randomizer named by cfg.Kind over layout l.
func New(cfg Config, l *corpus.Layout) (Randomizer, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	switch cfg.Kind {
	case "none":
		return newNone(l), nil
	case "cntk":
		return newCNTK(cfg, l)
	case "window", "":
		return newWindow(cfg, l)
	}
	return nil, fmt.Errorf("randomize: unknown randomizer %q (want none, cntk or window)", cfg.Kind)
}

// VisitOrder is implemented by randomizers that can tell in advance the
// order in which a sweep visits each chunk's sequences (window). A reader
// may then lay a chunk out in that order when it loads it, so that the
// sequences it copies one after the other sit side by side in memory; it
// never changes an order.
type VisitOrder interface {
	// Visits returns the chunk-relative indices of chunk c's sequences in
	// the order sweep s visits them. The slice is shared: callers must not
	// modify it. Visits is safe for concurrent use.
	Visits(s uint64, c int) []int32
	// PrepareVisits starts computing, in the background, what Visits(s, c)
	// will return, and the same for the chunks the sweep visits next (the
	// next two windows, crossing into the next sweep), and returns at once,
	// reporting whether Visits(s, c) is ready (a call would not wait). A
	// reader that calls it as it reads never waits for an order; one that
	// cannot wait (the first chunks after a seek) can do without.
	PrepareVisits(s uint64, c int) (ready bool)
}
