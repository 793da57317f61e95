package ctf

import (
	"context"
	"fmt"
	"maps"
	"os"
	"sync"
	"sync/atomic"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/plural"
	"github.com/batchprep/batchprep/internal/procs"
)

// Reader is an indexed CTF file. It implements corpus.Source; LoadChunk is
// safe for concurrent use.
type Reader struct {
	path   string
	cfg    Config
	f      corpus.Blob
	x      *index
	layout *corpus.Layout

	mu sync.Mutex
	// acct is the Reader's own budget and reports (a Session has its own).
	acct      accounts
	opened    opening // what opening reported, for each new Session
	fromCache bool
	// carried[c] counts, per stream, the lines of chunk c carrying it (nil
	// until the chunk is parsed or counted).
	carried [][]int64
	fp      map[string]string // see Fingerprint
	// bufs recycles up to two chunk read buffers per processor (fresh memory
	// costs page faults on every read; a reader that loads chunks in
	// parallel, as the source does, uses several at once), the one put
	// back last first: a Chunk never points into the bytes it was parsed
	// from (ids are copied), so the buffer is free after parsing.
	bufs *hot[[]byte]
	// spare holds chunks handed back by Recycle.
	spare chan *corpus.Chunk
	// scratch holds the parsers' scratch arrays (see chunkParser.parse), one
	// per processor: the arrays a parse builds in, reused hot.
	scratch *hot[*corpus.Chunk]
	// noWaitRun counts the chunk reads in a row that got all their bytes
	// without waiting (preadNoWait); see Prefetch.
	noWaitRun atomic.Int64
	// unadvised holds the chunks Prefetch skipped advising since the last
	// read that fell short (see adviseSkipped).
	unadvised unadvised
}

var (
	_ corpus.ArrangingSource = (*Reader)(nil)
	_ corpus.Recycler        = (*Reader)(nil)
)

// Open validates cfg, indexes path (or loads a valid index cache when
// cfg.CacheIndex is set) and returns a Reader. Sequences dropped by the
// index (no sample of the defines_mb_size stream) are charged to the error
// budget here. OpenContext can stop the index pass and read a file already
// open.
func Open(path string, cfg Config) (*Reader, error) {
	return OpenContext(context.Background(), path, cfg, OpenOptions{})
}

// openFile opens the Reader of f, a validated cfg and the pass's controls;
// it never closes f.
func openFile(ps *pass, f corpus.Blob, path string, cfg Config) (*Reader, error) {
	cfg.Streams = append([]corpus.Stream(nil), cfg.Streams...)
	r := &Reader{path: path, cfg: cfg, f: f, bufs: newHot[[]byte](2 * procs.Compute()),
		spare: make(chan *corpus.Chunk, 8), scratch: newHot[*corpus.Chunk](procs.Compute())}
	if err := r.index(ps); err != nil {
		return nil, err
	}
	if err := r.fingerprint(); err != nil {
		return nil, err
	}
	r.layout = r.x.layout()
	r.carried = make([][]int64, r.layout.NumChunks())
	if r.x.skippedLines > 0 {
		for k, p := range r.x.skipped {
			n := 0
			if k == 0 {
				n = int(r.x.skippedLines) // one count per line, however many are named
			}
			r.opened.note(Error{File: path, Line: p.line + 1, Col: 1, Offset: p.off,
				Msg: fmt.Sprintf("line without stream %q skipped (line mode, defines_mb_size); expected a sample of it on every line", cfg.DefinesMBSize), Err: ErrSkippedLine}, n)
		}
		if more := r.x.skippedLines - int64(len(r.x.skipped)); more > 0 {
			last := r.x.skipped[len(r.x.skipped)-1]
			r.opened.note(Error{File: path, Line: last.line + 1, Col: 1, Offset: last.off,
				Msg: fmt.Sprintf("%s without stream %q after this one %s skipped (line mode, defines_mb_size); only the first %d are named",
					plural.Count(more, "more line"), cfg.DefinesMBSize, plural.Noun(more, "was", "were"), len(r.x.skipped)), Err: ErrSkippedLine}, 0)
		}
	}
	if r.x.lastLine > 0 {
		r.opened.note(Error{File: path, Line: r.x.lastLine, Col: int(r.x.lastCol), Offset: r.x.size,
			Msg: "the last line ends without a newline; expected '\\n' (the line is read as complete)", Err: ErrNoNewline}, 1)
	}
	r.acct = newAccounts(cfg.Warn, cfg.MaxErrors, r.layout.NumChunks())
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.open(&r.acct); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) index(ps *pass) error {
	if r.cfg.CacheIndex {
		x, err := loadCache(r.f, r.path, &r.cfg)
		if err == nil {
			r.x, r.fromCache = x, true
			return nil
		}
		if !os.IsNotExist(err) {
			r.opened.note(Error{File: cachePath(r.path, &r.cfg), Msg: err.Error(), Err: ErrCache}, 1)
		}
	}
	spillDir := ""
	if st, err := r.f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() >= spillAbove {
		spillDir = os.TempDir()
	}
	x, err := buildIndexFile(ps, r.f, &r.cfg, r.path, spillDir)
	if err != nil {
		return err
	}
	r.x = x
	if x.spill != nil {
		return r.seal(x)
	}
	if r.cfg.CacheIndex {
		if err := writeCache(r.f, r.path, &r.cfg, x); err != nil {
			r.opened.note(Error{File: cachePath(r.path, &r.cfg), Msg: "could not write the index cache: " + err.Error(), Err: ErrCache}, 1)
		}
	}
	return nil
}

// spillAbove is the file size from which the index pass spills its
// per-sequence tables to disk and the reader maps them (an index file):
// below it they stay on the heap, where they take about 2.5% of the file
// (16 bytes per sequence of ~600). Tests lower it.
var spillAbove int64 = 256 << 20

// seal writes the spilled index x as the index cache (when enabled) or a
// temporary file, and maps it. A cache that cannot be written is noted and
// the index goes to a temporary file instead.
func (r *Reader) seal(x *index) error {
	k, err := keyOf(r.f, &r.cfg)
	if err != nil {
		x.dropSpill()
		return fmt.Errorf("ctf: %s: %w", r.path, err)
	}
	if r.cfg.CacheIndex {
		cp := cachePath(r.path, &r.cfg)
		err := x.seal(k, cp, true)
		if err == nil {
			return nil
		}
		r.opened.note(Error{File: cp, Msg: "could not write the index cache: " + err.Error(), Err: ErrCache}, 1)
	}
	if err := x.seal(k, "", false); err != nil {
		x.dropSpill()
		return err
	}
	return nil
}

// Layout returns the index (never modified after Open).
func (r *Reader) Layout() *corpus.Layout { return r.layout }

// Streams returns the configured streams.
func (r *Reader) Streams() []corpus.Stream { return r.cfg.Streams }

// ChunkBytes returns the bytes of text chunk c spans in the file (what
// reading it takes before parsing).
func (r *Reader) ChunkBytes(c int) int64 {
	_, n := r.x.span(c)
	return n
}

// Path returns the file name.
func (r *Reader) Path() string { return r.path }

// Config is the configuration r was opened with (defaults filled in).
func (r *Reader) Config() Config { return r.cfg }

// LoadChunk reads and parses chunk c. Bad sequences are reported in
// Chunk.Bad with empty data and charged to the error budget once per
// sequence over the Reader's life; warnings are reported the first time a
// chunk is loaded. Once the budget is exhausted every call fails.
func (r *Reader) LoadChunk(c int) (*corpus.Chunk, error) { return r.load(&r.acct, c) }

// load is LoadChunk against a's budget.
func (r *Reader) load(a *accounts, c int) (*corpus.Chunk, error) {
	rep, ch, err := r.parseChunk(a, c, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := r.charge(a, c, rep); err != nil {
		return nil, err
	}
	return ch, nil
}

// ParseChunk implements corpus.DeferredSource: it parses chunk c as
// LoadChunk does, but reports nothing and charges nothing until commit is
// called. commit reports the chunk's warnings (first commit of the chunk
// only) and charges its bad sequences to the error budget, exactly as
// LoadChunk would at that moment, and returns the *BudgetError when the
// budget runs out. It may be called once, on any goroutine, and not at
// all for a chunk the caller never uses. It reads only what the parse
// left aside, not ch, which may be recycled before it.
func (r *Reader) ParseChunk(c int) (ch *corpus.Chunk, commit func() error, err error) {
	return r.deferred(&r.acct, c, nil, nil)
}

// ParseChunkArranged implements corpus.ArrangingSource: ParseChunk with
// the chunk laid out in order, which the parse's copy out of its scratch
// arrays makes instead of a plain copy (see chunkParser.parse). into, or
// else a chunk handed back through Recycle, lends its arrays.
func (r *Reader) ParseChunkArranged(c int, order []int32, into *corpus.Chunk) (ch *corpus.Chunk, commit func() error, err error) {
	return r.arranged(&r.acct, c, order, into)
}

// arranged is ParseChunkArranged against a's budget.
func (r *Reader) arranged(a *accounts, c int, order []int32, into *corpus.Chunk) (*corpus.Chunk, func() error, error) {
	if c >= 0 && c < r.layout.NumChunks() {
		if first, end := r.layout.Chunk(c); len(order) != end-first {
			return nil, nil, fmt.Errorf("ctf: chunk %d: an order of %d sequences for %d", c, len(order), end-first)
		}
	}
	if order == nil {
		order = []int32{} // an empty chunk, arranged all the same
	}
	return r.deferred(a, c, order, into)
}

// deferred parses chunk c (arranged in order when it is not nil) and
// returns the commit that charges it to a.
func (r *Reader) deferred(a *accounts, c int, order []int32, into *corpus.Chunk) (*corpus.Chunk, func() error, error) {
	rep, ch, err := r.parseChunk(a, c, order, into)
	if err != nil {
		return nil, nil, err
	}
	return ch, func() error { return r.charge(a, c, rep) }, nil
}

// parseReport is what a parse of a chunk leaves for the Reader's accounting
// (see charge). It holds neither the parser nor the chunk, so a commit
// kept for later keeps neither alive.
type parseReport struct {
	carried []int64
	warns   []Error
	more    map[int][]Error
	bad     []badSeq // in chunk order
}

// badSeq is a bad sequence of a chunk: its index in the chunk, its first
// diagnostic.
type badSeq struct {
	i   int
	err *Error
}

// report is what p's parse of a chunk leaves for charge; bad are the
// chunk's parse errors in chunk order (Chunk.Bad before any arrangement).
func report(p *chunkParser, bad []error) parseReport {
	a := parseReport{carried: p.carried, warns: p.warns, more: p.more}
	for i, b := range bad {
		if b != nil {
			a.bad = append(a.bad, badSeq{i, b.(*Error)})
		}
	}
	return a
}

// parseChunk reads and parses chunk c without touching a, the accounts it
// is read for (see charge), unless a's budget is spent already, and
// returns what charge needs. With order non-nil, the chunk is laid out in
// that order (corpus.Arrange). The chunk is written into into's arrays, or
// else into a recycled chunk's.
func (r *Reader) parseChunk(a *accounts, c int, order []int32, into *corpus.Chunk) (parseReport, *corpus.Chunk, error) {
	if c < 0 || c >= r.layout.NumChunks() {
		return parseReport{}, nil, fmt.Errorf("ctf: chunk %d out of range [0, %d)", c, r.layout.NumChunks())
	}
	r.mu.Lock()
	failed := a.failed
	r.mu.Unlock()
	if failed != nil {
		return parseReport{}, nil, failed
	}
	data, release, err := r.readChunk(c)
	if err != nil {
		return parseReport{}, nil, err
	}
	defer release()
	defer r.layout.Release(c) // the totals need each chunk's tables once
	p := newChunkParser(&r.cfg, r.path, r.x)
	old := into
	if old == nil {
		select {
		case old = <-r.spare:
		default:
		}
	}
	var ok bool
	if p.scratch, ok = r.scratch.take(); !ok {
		p.scratch = &corpus.Chunk{}
	}
	ch, rep := p.parse(c, data, old, order)
	r.scratch.put(p.scratch)
	p.scratch = nil
	return rep, ch, nil
}

// Recycle implements corpus.Recycler: a later LoadChunk reuses ch's arrays
// (up to a few chunks are kept; more are left to the collector).
func (r *Reader) Recycle(ch *corpus.Chunk) {
	if ch == nil {
		return
	}
	select {
	case r.spare <- ch:
	default:
	}
}

// charge reports chunk c, whose parse left rep, to a: its warnings (the
// first time a loads the chunk) and its bad sequences, each charged once.
func (r *Reader) charge(a *accounts, c int, rep parseReport) error {
	first, _ := r.layout.Chunk(c)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.carried[c] == nil {
		r.carried[c] = rep.carried
	}
	if a.failed != nil {
		return a.failed
	}
	if !a.loaded[c] {
		a.loaded[c] = true
		for _, w := range rep.warns {
			a.warnings[Kind(w.Err)]++
			a.warn(w)
		}
	}
	for _, b := range rep.bad {
		if _, ok := a.charged[first+b.i]; ok {
			continue
		}
		a.charged[first+b.i] = struct{}{}
		if err := a.chargeLocked(b.err); err != nil {
			return err
		}
		for _, e := range rep.more[first+b.i] {
			a.warn(e)
		}
	}
	return nil
}

// LoadAll loads every chunk in order, parsing up to workers of them at once
// (workers < 1 means procs.Compute()), and calls fn with each in chunk order on
// the caller's goroutine. Warnings, the error budget and fn see the chunks
// exactly as a loop of LoadChunk(0), LoadChunk(1), ... would: only the
// parsing runs in parallel, at most 2*workers chunks ahead of fn. The first
// error (from loading or from fn) stops it.
func (r *Reader) LoadAll(workers int, fn func(c int, ch *corpus.Chunk) error) error {
	if workers < 1 {
		workers = procs.Compute()
	}
	n := r.layout.NumChunks()
	type parsed struct {
		a   parseReport
		ch  *corpus.Chunk
		err error
	}
	ahead := 2 * workers
	slots := make([]chan parsed, n)
	for c := range slots {
		slots[c] = make(chan parsed, 1)
	}
	var next atomic.Int64
	sem := make(chan struct{}, ahead) // chunks parsed but not yet committed
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				select {
				case sem <- struct{}{}:
				case <-stop:
					return
				}
				c := int(next.Add(1)) - 1
				if c >= n {
					return
				}
				rep, ch, err := r.parseChunk(&r.acct, c, nil, nil)
				slots[c] <- parsed{rep, ch, err}
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for c := range n {
		got := <-slots[c]
		<-sem
		if got.err != nil {
			return got.err
		}
		if err := r.charge(&r.acct, c, got.a); err != nil {
			return err
		}
		if err := fn(c, got.ch); err != nil {
			return err
		}
		r.layout.Release(c) // a pass over every chunk needs each one's tables once
	}
	return nil
}

// readChunk reads chunk c's bytes, borrowed from the corpus's Blob when it
// lends them (corpus.Lender), else into a recycled buffer; release hands
// them back.
func (r *Reader) readChunk(c int) (data []byte, release func(), err error) {
	if err := r.x.checkChunk(c); err != nil {
		return nil, nil, fmt.Errorf("%w (%s; remove it to index %s again)", err, cachePath(r.path, &r.cfg), r.path)
	}
	off, n := r.x.span(c)
	if l, ok := r.f.(corpus.Lender); ok {
		data, release, err := l.Borrow(off, n)
		if err != nil {
			return nil, nil, fmt.Errorf("ctf: %s: chunk %d: %w", r.path, c, err)
		}
		return data, release, nil
	}
	data, _ = r.bufs.take()
	if int64(cap(data)) < n {
		// With an eighth to spare: chunks differ in size, and a buffer
		// of exactly this one's would be too short for a tenth of those
		// after it, each then a fresh allocation to zero and fault in.
		data = make([]byte, n, n+n/8)
	}
	data = data[:n]
	got := readNoWait(r.f, data, off)
	if got == len(data) {
		r.noWaitRun.Add(1)
	} else {
		r.noWaitRun.Store(0)
		_, err := r.f.ReadAt(data[got:], off+int64(got))
		r.adviseSkipped(c)
		if err != nil {
			r.recycle(data)
			return nil, nil, fmt.Errorf("ctf: %s: chunk %d: %w", r.path, c, err)
		}
	}
	return data, func() { r.recycle(data) }, nil
}

func (r *Reader) recycle(data []byte) { r.bufs.put(data) }

// countCarried counts, per stream, the lines of chunk c's sequences that
// carry it, the way the indexer recognizes stream names (a '|', the name,
// then a delimiter, '|' or the end of the line).
func (r *Reader) countCarried(c int) ([]int64, error) {
	data, release, err := r.readChunk(c)
	if err != nil {
		return nil, err
	}
	defer release()
	defer r.layout.Release(c) // the totals need each chunk's tables once
	p := newChunkParser(&r.cfg, r.path, r.x)
	first, end := r.layout.Chunk(c)
	for i := first; i < end; i++ {
		p.countCarried(data[r.x.rel[i] : int64(r.x.rel[i])+int64(r.x.sizes[i])])
	}
	return p.carried, nil
}

// streamSamples returns the per-stream line totals, counting the chunks that
// have not been parsed yet (outside the lock: it reads the file).
func (r *Reader) streamSamples() ([]int64, error) {
	r.mu.Lock()
	var missing []int
	for c, v := range r.carried {
		if v == nil {
			missing = append(missing, c)
		}
	}
	r.mu.Unlock()
	for _, c := range missing {
		v, err := r.countCarried(c)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		if r.carried[c] == nil {
			r.carried[c] = v
		}
		r.mu.Unlock()
	}
	total := make([]int64, len(r.cfg.Streams))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.carried {
		for s, n := range v {
			total[s] += n
		}
	}
	return total, nil
}

// Summary reports what reading has met so far.
type Summary struct {
	Sequences int
	Chunks    int
	// Samples[s] is the number of lines of the indexed sequences carrying
	// stream s. It is gathered while chunks are parsed; Summary reads the
	// chunks not parsed yet to complete it (nil if that read fails, with a
	// warning through Config.Warn).
	Samples []int64
	// BadSequences is the number of distinct bad sequences met (each
	// counted once), including those dropped by the index.
	BadSequences int
	// Skipped counts bad sequences by kind (see Kind).
	Skipped map[string]int
	// Warnings counts warnings by kind; a chunk's warnings are counted the
	// first time it is loaded.
	Warnings map[string]int
	// LineMode tells whether the file was read in line mode.
	LineMode bool
	// FromCache tells whether the index came from the cache.
	FromCache bool
}

// Summary returns a snapshot of the counts. Completing Samples may read the
// chunks not parsed yet (see SummaryNoTotals for a snapshot that never
// reads the file).
func (r *Reader) Summary() Summary { return r.summary(&r.acct, true) }

// SummaryNoTotals is Summary without Samples (nil): it never reads the file,
// for callers that want only the bad sequences and warnings.
func (r *Reader) SummaryNoTotals() Summary { return r.summary(&r.acct, false) }

// summary is Summary (with totals) or SummaryNoTotals for a's counts.
func (r *Reader) summary(a *accounts, totals bool) Summary {
	var samples []int64
	if totals {
		var err error
		if samples, err = r.streamSamples(); err != nil {
			r.mu.Lock()
			a.warn(Error{File: r.path, Msg: "per-stream totals: " + err.Error(), Err: err})
			r.mu.Unlock()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Summary{Sequences: r.layout.NumSequences(), Chunks: r.layout.NumChunks(), Samples: samples,
		BadSequences: a.bad, Skipped: maps.Clone(a.skipped), Warnings: maps.Clone(a.warnings),
		LineMode: r.x.lineMode, FromCache: r.fromCache}
	return s
}

// Close closes the file and unmaps the index file when the index is mapped
// (a cached index, or one of a file larger than spillAbove): the Layout's
// per-sequence tables must not be read after Close.
func (r *Reader) Close() error {
	if r.x != nil {
		r.x.m.Close()
	}
	return r.f.Close()
}

// IndexMemory reports the memory the index takes: heap bytes, and the
// bytes of the mapped index file in the process's resident set (0 when
// the index is on the heap), which the Release calls of a reader keep
// small.
func (r *Reader) IndexMemory() (heap, mapped int64) {
	if r.x.m == nil {
		return r.x.memBytes(), 0
	}
	return r.x.memBytes(), r.x.m.Resident()
}
