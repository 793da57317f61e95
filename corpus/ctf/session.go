package ctf

import (
	"fmt"

	"github.com/batchprep/batchprep/corpus"
)

// accounts is what one reading of a file reports and spends: its error
// budget, the bad sequences charged to it (each once), the chunks whose
// warnings it has reported, and the counts Summary gives. A Reader has its
// own; each Session has another, so readings that share an indexed file do
// not share a budget. Every method is called with the Reader's mu held.
type accounts struct {
	warnFn   func(Error)
	max      int
	loaded   []bool           // chunks parsed at least once (warnings reported)
	charged  map[int]struct{} // ordinals of bad sequences already charged
	bad      int              // distinct bad sequences (including dropped ones)
	failed   error            // sticky budget error
	skipped  map[string]int   // bad sequences by kind
	warnings map[string]int   // warnings by kind
}

func newAccounts(warn func(Error), maxErrors, chunks int) accounts {
	return accounts{warnFn: warn, max: maxErrors, loaded: make([]bool, chunks),
		charged: map[int]struct{}{}, skipped: map[string]int{}, warnings: map[string]int{}}
}

func (a *accounts) warn(e Error) {
	if a.warnFn != nil {
		a.warnFn(e)
	}
}

// chargeLocked charges one bad sequence to the budget.
func (a *accounts) chargeLocked(e *Error) error {
	a.bad++
	a.skipped[Kind(e)]++
	if a.bad > a.max {
		a.failed = &BudgetError{MaxErrors: a.max, Last: e}
		return a.failed
	}
	a.warn(*e)
	return nil
}

// opening is what opening the file reported: the index's warnings (counts
// by kind, and the messages) and the sequences it dropped. Open reports it
// to the Reader's accounts, NewSession to each session's.
type opening struct {
	counts map[string]int
	warns  []Error
}

// note records n warnings of e's kind at opening, with e's message
// (n may exceed 1 when one message stands for several).
func (o *opening) note(e Error, n int) {
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[Kind(e.Err)] += n
	o.warns = append(o.warns, e)
}

// open reports the opening of r to a: its warnings, then the sequences the
// index dropped, charged to a's budget (which they may exhaust).
func (r *Reader) open(a *accounts) error {
	for k, n := range r.opened.counts {
		a.warnings[k] += n
	}
	for _, e := range r.opened.warns {
		a.warn(e)
	}
	for i := range r.x.dropped {
		e := r.x.dropped[i]
		if err := a.chargeLocked(&e); err != nil {
			return err
		}
	}
	return nil
}

// A Session reads a Reader's indexed file with its own error budget and
// reports (the warnings, Summary's counts), as a Reader opened anew with
// that budget would, without a new index pass: several readings of one
// file (a server's calls, say) then neither spend each other's budget nor
// hide each other's warnings. It shares the Reader's file, index, buffers
// and per-stream totals, and is safe for concurrent use like the Reader;
// it must not be used after the Reader is closed. It implements the same
// corpus interfaces as the Reader.
type Session struct {
	r    *Reader
	acct accounts
}

var (
	_ corpus.ArrangingSource = (*Session)(nil)
	_ corpus.Recycler        = (*Session)(nil)
)

// NewSession returns a Session with a budget of maxErrors bad sequences
// (Config.MaxErrors; it need not be the Reader's own) whose warnings go to
// warn (nil: dropped). Like Open, it reports the index's warnings and
// charges the sequences the index dropped, and fails when they exceed the
// budget.
func (r *Reader) NewSession(maxErrors int, warn func(Error)) (*Session, error) {
	if maxErrors < 0 {
		return nil, fmt.Errorf("ctf: session: max_errors %d, want >= 0", maxErrors)
	}
	s := &Session{r: r, acct: newAccounts(warn, maxErrors, r.layout.NumChunks())}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.open(&s.acct); err != nil {
		return nil, err
	}
	return s, nil
}

// Layout returns the Reader's index.
func (s *Session) Layout() *corpus.Layout { return s.r.layout }

// Streams returns the configured streams.
func (s *Session) Streams() []corpus.Stream { return s.r.cfg.Streams }

// ChunkBytes returns the bytes of text chunk c spans in the file.
func (s *Session) ChunkBytes(c int) int64 { return s.r.ChunkBytes(c) }

// Path returns the file name.
func (s *Session) Path() string { return s.r.path }

// Fingerprint returns the Reader's fingerprint (see Reader.Fingerprint).
func (s *Session) Fingerprint() map[string]string { return s.r.Fingerprint() }

// LoadChunk is Reader.LoadChunk against the session's budget.
func (s *Session) LoadChunk(c int) (*corpus.Chunk, error) { return s.r.load(&s.acct, c) }

// ParseChunk is Reader.ParseChunk against the session's budget.
func (s *Session) ParseChunk(c int) (*corpus.Chunk, func() error, error) {
	return s.r.deferred(&s.acct, c, nil, nil)
}

// ParseChunkArranged is Reader.ParseChunkArranged against the session's
// budget.
func (s *Session) ParseChunkArranged(c int, order []int32, into *corpus.Chunk) (*corpus.Chunk, func() error, error) {
	return s.r.arranged(&s.acct, c, order, into)
}

// Recycle hands a chunk back to the Reader (see Reader.Recycle).
func (s *Session) Recycle(ch *corpus.Chunk) { s.r.Recycle(ch) }

// Prefetch implements corpus.Prefetcher.
func (s *Session) Prefetch(c int) { s.r.Prefetch(c) }

// HintAhead implements corpus.AheadHinter (Reader.HintAhead).
func (s *Session) HintAhead() int { return s.r.HintAhead() }

// Summary is Reader.Summary with the session's counts.
func (s *Session) Summary() Summary { return s.r.summary(&s.acct, true) }

// SummaryNoTotals is Reader.SummaryNoTotals with the session's counts.
func (s *Session) SummaryNoTotals() Summary { return s.r.summary(&s.acct, false) }
