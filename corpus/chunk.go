package corpus

// Stream describes one named input of a corpus.
type Stream struct {
	Name   string
	Dim    int
	Sparse bool
}

// Chunk is the parsed data of one chunk: every sequence of the chunk, in
// ordinal order, with per-stream data (an arranged chunk, see Arrange,
// holds them in the order it was arranged in; IDs, Bad and every stream
// follow that order).
type Chunk struct {
	// First is the ordinal of the chunk's first sequence.
	First int
	// IDs holds each sequence's id as written in the file (line mode: the
	// 0-based line number).
	IDs []string
	// Bad is nil when every sequence of the chunk parsed. Otherwise it has
	// one entry per sequence, and Bad[i] is non-nil when sequence First+i
	// could not be parsed; its data is then empty in every stream. The
	// error carries file, line, column. BadAt reads it either way.
	Bad []error
	// Streams has one entry per configured stream, in configuration order.
	Streams []StreamData
}

// StreamData holds one stream's samples for every sequence of a chunk.
//
// Sequence i (chunk-relative) owns samples [SeqStart[i], SeqStart[i+1]).
// Dense streams store sample j at Dense[j*Dim:(j+1)*Dim]. Sparse streams are
// CSR: sample j's entries are Indices/Values[RowStart[j]:RowStart[j+1]], in
// file order (neither sorted nor de-duplicated). RowStart and Values may be
// read-only arrays shared between chunks (Iota, Ones: one-hot streams), so
// no one writes into a chunk's arrays.
type StreamData struct {
	SeqStart []int32
	Dense    []float32
	RowStart []int32
	Indices  []int32
	Values   []float32
}

// BadAt returns the parse error of sequence i (chunk-relative), or nil.
func (c *Chunk) BadAt(i int) error {
	if c.Bad == nil {
		return nil
	}
	return c.Bad[i]
}

// Len returns the number of sequences in the chunk.
func (c *Chunk) Len() int { return len(c.IDs) }

// SampleCount returns the number of samples sequence i (chunk-relative) has in stream s.
func (c *Chunk) SampleCount(s, i int) int {
	d := &c.Streams[s]
	return int(d.SeqStart[i+1] - d.SeqStart[i])
}

// Source is a corpus that can be read chunk by chunk. Implementations must be
// safe for concurrent LoadChunk calls.
type Source interface {
	Layout() *Layout
	Streams() []Stream
	// LoadChunk parses chunk c. A malformed sequence does not fail the load:
	// it is reported in Chunk.Bad. An error means the chunk as a whole could
	// not be read (I/O, or the error budget is exhausted).
	LoadChunk(c int) (*Chunk, error)
}

// DeferredSource is implemented by Sources whose loads report something
// besides the chunk (warnings, an error budget that bad sequences use up):
// ParseChunk does the work of LoadChunk, safely on any goroutine and ahead
// of need, and reports nothing until commit is called. A reader that loads
// chunks ahead, in parallel, commits each chunk when it first uses it, on
// its own goroutine: what is reported, in what order, and where a budget
// runs out then follow the read order, not the order in which loads
// happened to finish. LoadChunk is ParseChunk followed by commit.
type DeferredSource interface {
	Source
	ParseChunk(c int) (ch *Chunk, commit func() error, err error)
}

// ArrangingSource is implemented by DeferredSources whose parse ends with a
// copy of the chunk into its final arrays anyway: ParseChunkArranged makes
// that copy in a given order, so a reader that wants a chunk arranged (see
// Arrange) gets it for the price of a plain parse, with no second copy and
// no second chunk held while it is made. It returns what
// Arrange(into, ParseChunk(c), order) would, with the same commit: order
// must have one entry per sequence of chunk c. into lends its arrays (nil:
// none); the caller owns the returned chunk, as it owns into, and may pass
// it as into again once it no longer reads it.
type ArrangingSource interface {
	DeferredSource
	ParseChunkArranged(c int, order []int32, into *Chunk) (ch *Chunk, commit func() error, err error)
}

// Recycler is implemented by Sources whose LoadChunk can reuse the memory of
// a chunk handed back to it. Recycle(ch) promises that nothing reads or
// keeps ch or its slices any more (strings taken from ch.IDs stay valid:
// strings are immutable); a later LoadChunk may overwrite them, except
// the shared arrays (SharedIota, SharedOnes), which it must not reuse. A reader
// that caches chunks recycles the ones it evicts, so the arrays of a new
// chunk are memory already mapped and touched, not fresh pages to fault in
// and zero, and the collector has less to do.
type Recycler interface {
	Recycle(ch *Chunk)
}

// Prefetcher is implemented by Sources whose chunks can start coming in
// from storage before they are loaded (for a file, the kernel reading the
// chunk's byte range ahead into the page cache). A reader calls Prefetch
// for every chunk it queues for loading: a window entered queues a hundred
// chunks, which a few goroutines then load one at a time, and the device
// serves them many at once instead of one read per goroutine. A reader
// calls it again for a chunk it now needs sooner than the others queued
// (a minibatch wants it before its load started), which a Prefetcher may
// bring in first. It never changes what a load returns.
type Prefetcher interface {
	Prefetch(c int)
}

// AheadHinter is a Prefetcher that reads ahead only what it is told of (a
// file read around the page cache, which has no readahead of its own): a
// reader in file order hints it of the HintAhead chunks after the ones it
// loads.
type AheadHinter interface {
	Prefetcher
	HintAhead() int
}
