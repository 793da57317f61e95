package source

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/internal/procs"
)

// chunkCache keeps the most recently used parsed chunks, at most cap of them,
// so a reader's memory is bounded by the randomization window rather than by
// the corpus. Chunks are pure functions of the corpus, so whether a chunk was
// cached, evicted or prefetched never changes what a reader delivers.
type chunkCache struct {
	src   corpus.Source
	cap   int
	mu    sync.Mutex
	slots []*cacheEntry // by chunk index; nil when not resident
	head  cacheEntry    // sentinel of the LRU ring: head.next is the newest
	n     int
	wg    sync.WaitGroup
	loads int // chunk loads started (for tests and reports)
	// gen counts the changes of slots (insertions, evictions, removals).
	// Only the reader's goroutine changes it; an entry want returned is
	// still resident, and as new as get would make it, while gen has not
	// moved (see getWanted).
	gen uint64
	// moves counts the moves to the front of the LRU ring (pushFront).
	moves uint64
	// ordered says the reader keeps the ring in the order it needs itself
	// (Source.prefetchWindow): a want of every chunk an assembly reads,
	// all resident, then leaves the ring as it is (see fetch).
	ordered bool
	// The load queues: want's chunks (hi) go before prefetch's (lo). At
	// most procs.Compute() background workers take from them, hi first; want's
	// caller works on hi as well.
	hi, lo  []*cacheEntry
	workers int
	// stop makes background workers drop the loads they have not started
	// (see stopPrefetch).
	stop atomic.Bool
	// visits, when set, has each small chunk loaded arranged in the order
	// its sweep visits it, when that order is ready (see arrange); sweep is
	// set by the reader before it asks for chunks and recorded by each
	// entry it inserts.
	visits   randomize.VisitOrder
	sweep    uint64
	arranged atomic.Int32 // chunks arranged so far (for tests)
	// parseArranged counts those the corpus arranged as it parsed them
	// (corpus.ArrangingSource; for tests).
	parseArranged atomic.Int32
	// waitVisits makes a load wait for its window's order when it is not
	// ready, instead of keeping the file layout (for tests that count
	// arrangements).
	waitVisits bool
}

// errDropped marks an entry whose background load was dropped by
// stopPrefetch: get loads the chunk itself instead.
var errDropped = errors.New("source: chunk prefetch dropped")

type cacheEntry struct {
	c       int
	chunk   *corpus.Chunk
	hasBad  bool          // some sequence of the chunk is malformed
	single  uint64        // bit s: every sample of sparse stream s has exactly one entry (s < 64)
	ones    uint64        // bit s: every value of sparse stream s is 1 (s < 64)
	unit    uint64        // bit s: every sequence has exactly one sample in stream s (s < 64)
	warm    uint64        // the result of warm, kept so its loads are not dropped
	sweep   uint64        // the sweep to arrange the chunk for (with visits)
	arr     *arrangement  // how the chunk is arranged (nil: file layout)
	evicted []*cacheEntry // entries insert evicted to make room for this one (see recycle)
	err     error
	// commit reports the load (corpus.DeferredSource); get calls it when
	// the reader first uses the chunk, then clears it.
	commit  func() error
	claimed atomic.Bool   // set by the one goroutine that loads (or drops) the entry
	done    chan struct{} // closed once chunk/err are set
	// loaded is set with done's close by a load (not a drop): getWanted
	// reads it in the entry, beside the fields it reads next, where a
	// receive from done reads the channel, a cache miss per chunk and
	// minibatch.
	loaded     atomic.Bool
	prev, next *cacheEntry
}

func newChunkCache(src corpus.Source, capacity int) *chunkCache {
	cc := &chunkCache{src: src, cap: max(capacity, 1), slots: make([]*cacheEntry, src.Layout().NumChunks())}
	cc.head.next, cc.head.prev = &cc.head, &cc.head
	return cc
}

func (cc *chunkCache) unlink(e *cacheEntry) {
	e.prev.next, e.next.prev = e.next, e.prev
}

func (cc *chunkCache) pushFront(e *cacheEntry) {
	cc.moves++
	e.prev, e.next = &cc.head, cc.head.next
	e.next.prev = e
	cc.head.next = e
}

// insert adds a new entry for chunk c (lock held) and evicts the oldest ones
// beyond the capacity.
func (cc *chunkCache) insert(c int) *cacheEntry {
	e := &cacheEntry{c: c, sweep: cc.sweep, done: make(chan struct{})}
	cc.slots[c] = e
	cc.src.Layout().Need(c) // the chunk's counts, if they are in a mapped file
	cc.pushFront(e)
	cc.n++
	cc.loads++
	cc.gen++
	for cc.n > cc.cap {
		old := cc.head.prev
		cc.unlink(old)
		cc.slots[old.c] = nil
		cc.n--
		e.evicted = append(e.evicted, old)
		// The chunk's counts may leave memory with it (a mapped index).
		cc.src.Layout().Release(old.c)
	}
	return e
}

// recycle hands the chunks evicted to make room for e back to the corpus
// (corpus.Recycler), just before e loads, so that e's load reuses their
// arrays. Handing them back at eviction instead would lose most of them in
// window order: entering a window evicts a hundred chunks at once, more
// than a corpus keeps for reuse, and the loads that follow would parse into
// fresh memory. Each recycled chunk is thus held until the load that
// replaces it starts, which keeps the chunks alive at once within the
// cache's capacity. An evicted entry still loading is left to the
// collector. Evicted chunks are never in use: every insertion and eviction
// runs on the caller's goroutine, and an assembly's pinned chunks are the
// cache's newest (see Source.assemble), so the oldest entry is never
// pinned; a Minibatch copies what it delivers.
//
// When chunks are arranged, the first evicted entry that was arranged is
// kept back and returned: e's arrangement is written into its arrays, and
// the chunk e parses is handed back to the corpus instead (load hands the
// spare back when e is not arranged after all). Only an arranged chunk's
// arrays are the cache's to write: a chunk in file layout is the corpus's,
// which may share it (corpus.Memory serves the same chunk every time).
// handed counts the evicted chunks handed back to the corpus.
func (cc *chunkCache) recycle(e *cacheEntry) (spare *cacheEntry, handed int) {
	old := e.evicted
	e.evicted = nil
	rc, _ := cc.src.(corpus.Recycler)
	for _, o := range old {
		select {
		case <-o.done:
			if o.err != nil || o.chunk == nil {
				continue
			}
			if spare == nil && o.arr != nil {
				spare = o
			} else if rc != nil {
				rc.Recycle(o.chunk)
				handed++
			}
		default:
		}
	}
	return spare, handed
}

func (cc *chunkCache) load(e *cacheEntry) {
	spare, handed := cc.recycle(e)
	arranged := false
	as, arranging := cc.src.(corpus.ArrangingSource)
	if arranging {
		if order := cc.visitOrder(e); order != nil {
			// The parse lays the chunk out itself, into spare's arrays.
			var into *corpus.Chunk
			var pos []int32
			if spare != nil {
				into, pos = spare.chunk, spare.arr.pos
			}
			e.chunk, e.commit, e.err = as.ParseChunkArranged(e.c, order, into)
			if e.err == nil {
				e.arr = &arrangement{order: order, pos: inverse(order, pos)}
				cc.arranged.Add(1)
				cc.parseArranged.Add(1)
				arranged, spare = true, nil
			}
		}
	}
	if !arranged && e.err == nil {
		if ds, ok := cc.src.(corpus.DeferredSource); ok {
			e.chunk, e.commit, e.err = ds.ParseChunk(e.c)
		} else {
			e.chunk, e.err = cc.src.LoadChunk(e.c)
		}
	}
	if e.err == nil {
		for _, b := range e.chunk.Bad {
			if b != nil {
				e.hasBad = true
				break
			}
		}
		e.unit = unitStreams(e.chunk)
		e.single = singleEntryStreams(e.chunk)
		e.ones = onesStreams(e.chunk)
		// Only small chunks are arranged after their load, or warmed (see
		// warmLimit). A corpus that arranges as it parses is never arranged
		// after: a chunk whose order was not ready keeps its file layout.
		if !arranged && parsedBytes(e.chunk) <= warmLimit {
			if !arranging && cc.arrange(e, spare, handed > 0) {
				spare = nil // its arrays hold e's chunk now
			} else {
				e.warm = warm(e.chunk)
			}
		}
	}
	if rc, ok := cc.src.(corpus.Recycler); ok && spare != nil {
		rc.Recycle(spare.chunk)
	}
	e.loaded.Store(true)
	close(e.done)
}

// visitOrder returns the order in which e's sweep visits e's chunk, when
// the cache arranges chunks and that order is ready (with waitVisits, once
// it is), and when it fits the chunk; else nil.
func (cc *chunkCache) visitOrder(e *cacheEntry) []int32 {
	if cc.visits == nil {
		return nil
	}
	if !cc.visits.PrepareVisits(e.sweep, e.c) && !cc.waitVisits {
		return nil
	}
	order := cc.visits.Visits(e.sweep, e.c)
	if first, end := cc.src.Layout().Chunk(e.c); len(order) != end-first {
		return nil
	}
	return order
}

// arrange lays e's chunk out in the order e's sweep visits it (arrange.go),
// after a load by a corpus that cannot arrange as it parses
// (corpus.ArrangingSource), into spare's arrays when there is one, and
// hands the parsed chunk back to the corpus, unless it made a new chunk
// while evicted ones were handed back (handedBack): the corpus then holds
// no more spare chunks than without arrangements, and the parsed copy goes
// to the collector. It reports whether it arranged the chunk: not without
// visits, nor when the order does not fit the chunk; load asks only for
// chunks of at most warmLimit bytes. A chunk being arranged this way exists
// twice until the parsed copy is handed back, so each load in flight holds
// one chunk more than the cache counts: a few MiB for small chunks, within
// the read's headroom (Headroom), but tens of MiB for chunks of 8 or 32 MiB
// of text, which keep their file layout. A corpus that arranges as it
// parses (ctf) has no such copy, and every chunk it loads with its order
// ready is arranged, whatever its size.
//
// A load does not wait for its window's order: a chunk loaded before the
// order is ready keeps its file layout. Asking for an order prepares the
// two windows after it as well (randomize.VisitOrder), so only the first
// chunks after a seek, which a caller waits for, go without.
func (cc *chunkCache) arrange(e, spare *cacheEntry, handedBack bool) bool {
	order := cc.visitOrder(e)
	if order == nil || len(order) != e.chunk.Len() {
		return false
	}
	var into *corpus.Chunk
	var pos []int32
	if spare != nil {
		into = spare.chunk
		if spare.arr != nil {
			pos = spare.arr.pos
		}
	}
	parsed := e.chunk
	e.arr = &arrangement{order: order}
	e.chunk, e.arr.pos = arrange(into, parsed, order, pos)
	cc.arranged.Add(1)
	if rc, ok := cc.src.(corpus.Recycler); ok && (spare != nil || !handedBack) {
		rc.Recycle(parsed)
	}
	return true
}

// warmLimit is the largest chunk (in bytes of ids and stream data) that
// load reads through once; see warm.
const warmLimit = 4 << 20

// warm reads one word of every cache line of a small chunk's ids and
// stream arrays, front to back, and returns a value that depends on them
// (so the loads are kept). A randomized order then gathers the chunk's
// sequences from the processor's cache instead of paying one memory miss per
// sequence: a sequential pass is prefetched by the hardware and costs a
// fraction of the scattered misses it replaces, and the chunk is read this
// way once per residency. A chunk just parsed is already in cache and the
// pass is cheap; chunks larger than warmLimit would not stay in cache across
// a window, so load leaves them alone.
func warm(ch *corpus.Chunk) uint64 {
	var h uint64
	for i := 0; i < len(ch.IDs); i += 4 { // 16-byte string headers
		h += uint64(len(ch.IDs[i]))
	}
	for s := range ch.Streams {
		d := &ch.Streams[s]
		h += touchLines(d.SeqStart) + touchLines(ownRows(d.RowStart)) + touchLines(d.Indices) +
			touchLines(d.Dense) + touchLines(ownValues(d.Values))
	}
	return h
}

// parsedBytes is the size of a chunk's ids and stream arrays (the shared
// ones not counted).
func parsedBytes(ch *corpus.Chunk) int {
	size := 16 * len(ch.IDs)
	for s := range ch.Streams {
		d := &ch.Streams[s]
		size += 4 * (len(d.SeqStart) + len(d.Dense) + len(ownRows(d.RowStart)) + len(d.Indices) + len(ownValues(d.Values)))
	}
	return size
}

// ownRows and ownValues return a, or nil when a is one of corpus's shared
// arrays (Iota, Ones): those are not the chunk's to warm or count, and the
// assembly does not read them (the single and ones flags say what they
// hold).
func ownRows(a []int32) []int32 {
	if corpus.SharedIota(a) {
		return nil
	}
	return a
}

func ownValues(a []float32) []float32 {
	if corpus.SharedOnes(a) {
		return nil
	}
	return a
}

// touchLines reads one element of every 64-byte line of a and counts the
// non-zero ones.
func touchLines[T int32 | float32](a []T) uint64 {
	var n uint64
	for i := 0; i < len(a); i += 16 {
		if a[i] != 0 {
			n++
		}
	}
	return n
}

// unitStreams returns the streams (bit s for stream s < 64) in which every
// sequence of ch has exactly one sample; the assembly skips the per-sequence
// offset lookups for them.
func unitStreams(ch *corpus.Chunk) uint64 {
	var m uint64
	for s := range min(len(ch.Streams), 64) {
		ss := ch.Streams[s].SeqStart
		unit := len(ss) == ch.Len()+1
		for i := 0; unit && i < len(ss); i++ {
			unit = ss[i] == int32(i)
		}
		if unit {
			m |= 1 << s
		}
	}
	return m
}

// singleEntryStreams returns the sparse streams (bit s for stream s < 64)
// in which every sample of ch has exactly one entry (RowStart[k] == k), as
// in one-hot word inputs; the assembly then takes a sequence's entries from
// its sample range without reading the row starts.
func singleEntryStreams(ch *corpus.Chunk) uint64 {
	var m uint64
	for s := range min(len(ch.Streams), 64) {
		d := &ch.Streams[s]
		rs := d.RowStart
		if rs == nil || len(d.SeqStart) == 0 || len(rs) != int(d.SeqStart[len(d.SeqStart)-1])+1 {
			continue
		}
		if corpus.SharedIota(rs) {
			m |= 1 << s
			continue
		}
		single := true
		for k := 0; single && k < len(rs); k++ {
			single = rs[k] == int32(k)
		}
		if single {
			m |= 1 << s
		}
	}
	return m
}

// onesStreams returns the sparse streams (bit s for stream s < 64) whose
// every value in ch is 1, as in one-hot inputs written "index:1"; the
// assembly then writes the values without reading them.
func onesStreams(ch *corpus.Chunk) uint64 {
	var m uint64
	for s := range min(len(ch.Streams), 64) {
		d := &ch.Streams[s]
		if d.RowStart == nil {
			continue
		}
		if corpus.SharedOnes(d.Values) {
			m |= 1 << s
			continue
		}
		ones := true
		for _, v := range d.Values {
			if v != 1 {
				ones = false
				break
			}
		}
		if ones {
			m |= 1 << s
		}
	}
	return m
}

// chunkFlags are what the cache found out about a chunk when it loaded.
type chunkFlags struct {
	hasBad             bool         // some sequence is malformed
	unit, single, ones uint64       // unitStreams, singleEntryStreams, onesStreams
	arr                *arrangement // how the chunk is arranged (nil: file layout)
	sweep              uint64       // the sweep arr follows
}

// get returns chunk c, loading it (or waiting for its prefetch) if needed,
// and its flags. Only the reader's goroutine calls it: the first get of a
// load commits it (see cacheEntry.commit), so a corpus's warnings and error
// budget follow the read order whatever order loads finish in.
func (cc *chunkCache) get(c int) (*corpus.Chunk, chunkFlags, error) {
	for {
		cc.mu.Lock()
		e := cc.slots[c]
		if e == nil {
			e = cc.insert(c)
			e.claimed.Store(true)
			cc.mu.Unlock()
			cc.load(e)
		} else {
			cc.unlink(e)
			cc.pushFront(e)
			cc.mu.Unlock()
			if !e.claimed.Load() && e.claimed.CompareAndSwap(false, true) {
				cc.load(e) // queued by a prefetch that has not reached it
			} else {
				<-e.done
			}
		}
		if e.err == errDropped {
			continue // skip removed it from the slots: load it here
		}
		err := e.err
		if commit := e.commit; err == nil && commit != nil {
			// The first use of this load: its report and budget charge
			// happen here, in read order (see corpus.DeferredSource). Only
			// this goroutine reads commit; e.err stays as load left it,
			// since loaders read it (recycle).
			e.commit = nil
			err = commit()
		}
		if err != nil {
			cc.mu.Lock()
			if cc.slots[c] == e { // let a later call retry
				cc.unlink(e)
				cc.slots[c] = nil
				cc.n--
				cc.gen++
			}
			cc.mu.Unlock()
			return nil, chunkFlags{}, err
		}
		return e.chunk, e.flags(), nil
	}
}

func (e *cacheEntry) flags() chunkFlags {
	return chunkFlags{hasBad: e.hasBad, unit: e.unit, single: e.single, ones: e.ones, arr: e.arr, sweep: e.sweep}
}

// getWanted is get for chunk c when e is the entry want returned for it in
// this assembly and the cache's slots have not changed since (gen): e is
// then resident and among the newest, as get would leave it, so once e has
// loaded and its load is committed, it is returned without the lock and
// the move in the LRU ring that get costs for each chunk of each
// minibatch. Any other case goes through get.
func (cc *chunkCache) getWanted(c int, e *cacheEntry) (*corpus.Chunk, chunkFlags, error) {
	if e == nil {
		return cc.get(c)
	}
	if e.loaded.Load() && e.err == nil && e.commit == nil {
		return e.chunk, e.flags(), nil
	}
	return cc.get(c)
}

// want makes the distinct chunks cs (at most cap of them) resident and
// returns once every missing one has started loading: the resident ones
// become the newest, then the others are inserted and loaded by up to
// procs.Compute() workers, the caller's goroutine being one of them. The chunks a
// minibatch is about to need thus parse in parallel instead of one after the
// other when it enters a new window, with no more loads in flight than there
// are processors (each holds a read buffer of a chunk's size, so a 128-chunk
// window must not start 128 at once); get waits for the ones still loading.
// Chunks of cs that a prefetch queued but has not started are loaded by
// want's workers too, ahead of the rest of that prefetch: what the next
// minibatch needs never waits behind chunks needed later.
// Since the resident ones of cs are the newest when the others are
// inserted, no chunk of cs is evicted.
//
// It sets entries[c], when entries is not nil, to the entry of each chunk c
// of cs (getWanted).
//
// whole says cs are all the chunks the assembly that follows reads. When
// they are all resident, it inserts none, so nothing is evicted before the
// next want; in an ordered cache it then moves none either, since the
// reader orders the ring itself (see fetch).
func (cc *chunkCache) want(cs []int, entries []*cacheEntry, whole bool) {
	cc.fetch(cs, true, entries, whole)
}

// prefetch is want without the caller's goroutine: every missing chunk of cs
// loads in the background, and prefetch returns at once.
func (cc *chunkCache) prefetch(cs ...int) { cc.fetch(cs, false, nil, false) }

// fetch queues cs's missing chunks (and, for want, the queued ones not yet
// started), sets entries[c] (when given) to each one's entry, and makes
// sure workers take them. Every worker claims an entry before loading it,
// so an entry in both queues, or wanted by get meanwhile, loads once.
//
// A want of a whole assembly's chunks in an ordered cache (see want),
// all resident, moves none of them to the front: the assembly inserts
// nothing, so no chunk it pins can be evicted, and the reader's window
// prefetch keeps the ring as it needs it (the current window's chunks
// and the next window's first, the newest).
func (cc *chunkCache) fetch(cs []int, inline bool, entries []*cacheEntry, whole bool) {
	cc.mu.Lock()
	q := &cc.lo
	if inline {
		q = &cc.hi
	}
	keep := inline && whole && cc.ordered
	for _, c := range cs {
		if !keep {
			break
		}
		keep = cc.slots[c] != nil
	}
	added := 0
	// The chunks to hint (corpus.Prefetcher): the ones new to the cache,
	// and those want moves ahead of a prefetch (hinted again: a File read
	// around the page cache then reads them before the prefetch's).
	var queued []int
	for _, c := range cs {
		if e := cc.slots[c]; e != nil {
			if !keep {
				cc.unlink(e)
				cc.pushFront(e)
			}
			if inline && !e.claimed.Load() {
				*q = append(*q, e)
				added++
				queued = append(queued, c)
			}
		}
	}
	for _, c := range cs {
		if cc.slots[c] == nil {
			*q = append(*q, cc.insert(c))
			added++
			queued = append(queued, c)
		}
	}
	if entries != nil {
		for _, c := range cs {
			entries[c] = cc.slots[c]
		}
	}
	if added == 0 {
		cc.mu.Unlock()
		return
	}
	if pf, ok := cc.src.(corpus.Prefetcher); ok && len(queued) > 1 {
		// Under the lock, before a worker can claim them: a hint that came
		// after its chunk's load began would be no use to a corpus that
		// reads ahead only what it is told of (and, on a loaded machine,
		// the caller can lose its processor between unlock and hint).
		for _, c := range queued {
			pf.Prefetch(c)
		}
	}
	// Running workers are all busy loading (an idle one ends), so every
	// queued entry may start one, up to one per processor.
	for started := 0; cc.workers < procs.Compute() && started < len(cc.hi)+len(cc.lo); started++ {
		cc.workers++
		cc.wg.Add(1)
		go func() {
			defer cc.wg.Done()
			for e := cc.next(false); e != nil; e = cc.next(false) {
				cc.load(e)
			}
		}()
	}
	cc.mu.Unlock()
}

// next claims the next entry to load, from hi first (only from hi for
// want's caller, mine), dropping on the way those skip rejects. It returns
// nil when there is nothing left; a background worker then ends.
func (cc *chunkCache) next(mine bool) *cacheEntry {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for {
		var e *cacheEntry
		switch {
		case len(cc.hi) > 0:
			e, cc.hi = cc.hi[0], cc.hi[1:]
		case len(cc.lo) > 0 && !mine:
			e, cc.lo = cc.lo[0], cc.lo[1:]
		default:
			if !mine {
				cc.workers--
			}
			if len(cc.lo) == 0 {
				cc.hi, cc.lo = nil, nil // let the arrays go
			}
			return nil
		}
		if !e.claimed.CompareAndSwap(false, true) {
			continue // loaded by get or by the other queue
		}
		if cc.skipLocked(e) {
			continue
		}
		return e
	}
}

// resident returns the number of chunks held.
func (cc *chunkCache) resident() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.n
}

// skipLocked drops a claimed entry whose load has not started when the
// cache is stopping (stopPrefetch) or the entry was evicted while queued
// (its chunk would be parsed for nothing), and reports whether it did. A
// dropped entry leaves the cache; whoever waits for it loads the chunk
// itself.
func (cc *chunkCache) skipLocked(e *cacheEntry) bool {
	resident := cc.slots[e.c] == e
	if resident && !cc.stop.Load() {
		return false
	}
	if resident {
		cc.unlink(e)
		cc.slots[e.c] = nil
		cc.n--
	}
	cc.loads--      // counted by insert, never started
	e.evicted = nil // left to the collector
	e.err = errDropped
	close(e.done)
	return true
}

// stopPrefetch drops the background loads that have not started and waits
// for those in flight (at most one per processor). A reader that goes away
// thus costs no more parsing than it had under way, rather than the rest of
// a prefetched window. The cache stays usable: a dropped chunk is loaded
// again when it is wanted.
// releaseCounts tells the layout that no chunk's counts are needed any more
// (corpus.Layout.ReleaseAll): a source closed, or idle in a server, leaves
// none of a mapped index in memory.
func (cc *chunkCache) releaseCounts() { cc.src.Layout().ReleaseAll() }

func (cc *chunkCache) stopPrefetch() {
	cc.stop.Store(true)
	cc.wg.Wait()
	cc.stop.Store(false)
	cc.gen++ // skipLocked may have removed entries
}
