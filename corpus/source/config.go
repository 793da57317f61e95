package source

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/batchprep/batchprep/corpus/randomize"
)

// Config holds every setting that shapes the minibatches. The zero value
// (plus a randomizer kind) is usable: minibatch size 256, one sweep per
// epoch, minibatches may cross sweep ends, one worker.
type Config struct {
	// Randomize selects the sweep order (kind, seed, window). Part of the
	// state fingerprint.
	Randomize randomize.Config
	// Schedule gives the minibatch size K per epoch; the zero Schedule is a
	// constant 256 (CNTK's default).
	Schedule Schedule
	// EpochSize is the epoch length in label samples, EpochFull (one sweep,
	// the zero value) or EpochInf. Part of the state fingerprint.
	EpochSize EpochSize
	// CutAtSweep ends every minibatch at a sweep end (BrainScript
	// behaviour); otherwise minibatches may cross it (CNTK Python).
	CutAtSweep bool
	// Workers is the number of data-parallel ranks (0 means 1); Rank is
	// this one, 0 <= Rank < Workers. Neither is part of the state.
	Workers, Rank int
	// SplitChunks gives each rank the sequences of the global minibatch
	// whose chunks it owns (chunk c is rank (c+ChunkShift) mod Workers's)
	// instead of a contiguous group balanced by sample count (invariant 6):
	// a rank then loads only its own chunks, a Workers-th of the corpus,
	// and the same ones every sweep; its share of a minibatch varies from
	// step to step. The union over ranks is still the single-worker
	// minibatch. Not part of the state. Refused with file order, where a
	// minibatch lies in one or two chunks.
	SplitChunks bool
	// ChunkShift turns the chunk-to-rank assignment of SplitChunks, so that
	// the corpora of a mixture spread their first chunks over different
	// ranks (0 <= ChunkShift).
	ChunkShift int
	// AllowNoChunks lets New give a rank of SplitChunks none of the
	// corpus's chunks, which it refuses otherwise (ErrNoChunks): for a
	// mixture's corpus, whose other corpora feed the rank.
	AllowNoChunks bool
	// Prefetch loads the next chunk the timeline needs in a goroutine while
	// the caller works on the current minibatch, and loads the chunks a
	// minibatch needs that are not resident in parallel (a new window's
	// chunks parse on several cores at once). It never changes results.
	Prefetch bool
	// PrefetchChunks, with Prefetch, a window randomizer and one worker, is
	// how many chunks of the next randomization window are parsed in the
	// background while the current window is read, so that parsing the
	// next window overlaps the copying of this one. They get cache places of
	// their own: ResidentChunks grows by PrefetchChunks, or by the most
	// chunks a window holds when that is fewer. 0 prefetches no window. It
	// never changes results.
	PrefetchChunks int
	// OnEpochEnd, when set, is called by Next after a minibatch that ends an
	// epoch, with that epoch's index and the state after the minibatch (the
	// state to checkpoint). It runs on the caller's goroutine.
	OnEpochEnd func(epoch int, st State)

	// fileLayout keeps chunks in file layout even when the randomizer
	// could have them arranged (arrange.go): for tests and benchmarks that
	// compare the two. It never changes results.
	fileLayout bool
	// waitVisits makes every load of a small chunk arranged, waiting for
	// its window's order if need be (chunkCache.waitVisits): for tests that
	// count arrangements.
	waitVisits bool
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	if c.Workers < 0 {
		return fmt.Errorf("source: workers %d < 0", c.Workers)
	}
	w := max(c.Workers, 1)
	if c.Rank < 0 || c.Rank >= w {
		return fmt.Errorf("source: rank %d outside [0, %d)", c.Rank, w)
	}
	if err := c.Schedule.validate(); err != nil {
		return err
	}
	if c.SplitChunks && c.Randomize.Kind == "none" {
		return ErrSplitFileOrder
	}
	if c.ChunkShift < 0 {
		return fmt.Errorf("source: chunk shift %d < 0", c.ChunkShift)
	}
	switch c.Randomize.Kind {
	case "", "none", "cntk", "window":
	default:
		return fmt.Errorf("source: unknown randomizer %q (want none, cntk or window)", c.Randomize.Kind)
	}
	if c.PrefetchChunks < 0 {
		return fmt.Errorf("source: prefetch chunks %d < 0", c.PrefetchChunks)
	}
	if c.Randomize.WindowChunks < 0 {
		return fmt.Errorf("source: window chunks %d < 0", c.Randomize.WindowChunks)
	}
	return nil
}

func (c *Config) workers() int { return max(c.Workers, 1) }

// ErrSplitFileOrder refuses SplitChunks in file order: a minibatch there
// lies in one or two chunks, so one rank would get nearly all of it.
var ErrSplitFileOrder = errors.New("source: a split by chunks needs a randomized order (window or cntk): in file order a minibatch lies in one or two chunks, so one rank would get it all")

// ErrNoChunks refuses a split by chunks that gives a rank none of the
// corpus's chunks: it would take every step with nothing.
var ErrNoChunks = errors.New("source: the split by chunks gives this rank none of the corpus's chunks (each rank needs one: smaller chunks, fewer ranks, or the balanced split)")

// OwnsChunks tells whether, with SplitChunks, this rank owns one of n
// chunks (always true without SplitChunks or with one worker).
func (c *Config) OwnsChunks(n int) bool {
	return !c.SplitsChunks() || n >= c.workers() || ((c.Rank-c.ChunkShift)%c.workers()+c.workers())%c.workers() < n
}

// SplitsChunks tells whether ranks split minibatches by chunk owner
// (SplitChunks with more than one worker): a rank then reads only its own
// chunks, far apart in the corpus.
func (c *Config) SplitsChunks() bool { return c.SplitChunks && c.workers() > 1 }

// owns tells whether this rank owns chunk ch under SplitChunks.
func (c *Config) owns(ch int) bool { return (ch+c.ChunkShift)%c.workers() == c.Rank }

// EpochSize is an epoch length in label samples, or one of EpochFull and
// EpochInf.
type EpochSize uint64

const (
	// EpochFull makes every epoch exactly one sweep: epoch k is sweep k.
	EpochFull EpochSize = 0
	// EpochInf is one endless epoch.
	EpochInf EpochSize = math.MaxUint64
)

// ParseEpochSize reads "full", "inf" or a positive number of label samples.
func ParseEpochSize(s string) (EpochSize, error) {
	switch s {
	case "full":
		return EpochFull, nil
	case "inf":
		return EpochInf, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 || n == math.MaxUint64 {
		return 0, fmt.Errorf("source: epoch size %q: want full, inf or a positive number of label samples", s)
	}
	return EpochSize(n), nil
}

// String returns the form ParseEpochSize reads.
func (e EpochSize) String() string {
	switch e {
	case EpochFull:
		return "full"
	case EpochInf:
		return "inf"
	}
	return strconv.FormatUint(uint64(e), 10)
}

// DefaultMinibatchSize is the size of the zero Schedule.
const DefaultMinibatchSize = 256

// Schedule is a minibatch size per epoch, in CNTK's syntax: "128*2:1024"
// means 128 for epochs 0 and 1, then 1024 for every later epoch.
type Schedule struct {
	steps []scheduleStep
}

type scheduleStep struct {
	size   int
	repeat int
}

// ErrSchedule is wrapped by every schedule parse error.
var ErrSchedule = errors.New("source: bad minibatch schedule")

// ParseSchedule reads colon-separated tokens "value[*repeat]", value and
// repeat positive integers. The last value holds for all later epochs.
func ParseSchedule(s string) (Schedule, error) {
	var sc Schedule
	if strings.TrimSpace(s) == "" {
		return sc, fmt.Errorf("%w %q: empty", ErrSchedule, s)
	}
	for i, tok := range strings.Split(s, ":") {
		v, r, hasRepeat := strings.Cut(tok, "*")
		size, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || size <= 0 {
			return Schedule{}, fmt.Errorf("%w %q: token %d %q: size %q is not a positive integer", ErrSchedule, s, i+1, tok, v)
		}
		repeat := 1
		if hasRepeat {
			repeat, err = strconv.Atoi(strings.TrimSpace(r))
			if err != nil || repeat <= 0 {
				return Schedule{}, fmt.Errorf("%w %q: token %d %q: repeat %q is not a positive integer", ErrSchedule, s, i+1, tok, r)
			}
		}
		sc.steps = append(sc.steps, scheduleStep{size, repeat})
	}
	return sc, nil
}

// ConstantSchedule is the schedule that is k in every epoch.
func ConstantSchedule(k int) Schedule { return Schedule{steps: []scheduleStep{{k, 1}}} }

// At returns the minibatch size of epoch e.
func (s Schedule) At(e int) int {
	if len(s.steps) == 0 {
		return DefaultMinibatchSize
	}
	for _, st := range s.steps {
		if e < st.repeat {
			return st.size
		}
		e -= st.repeat
	}
	return s.steps[len(s.steps)-1].size
}

// String returns the canonical form ParseSchedule reads.
func (s Schedule) String() string {
	if len(s.steps) == 0 {
		return strconv.Itoa(DefaultMinibatchSize)
	}
	parts := make([]string, len(s.steps))
	for i, st := range s.steps {
		parts[i] = strconv.Itoa(st.size)
		if st.repeat != 1 {
			parts[i] += "*" + strconv.Itoa(st.repeat)
		}
	}
	return strings.Join(parts, ":")
}

func (s Schedule) validate() error {
	for i, st := range s.steps {
		if st.size <= 0 || st.repeat <= 0 {
			return fmt.Errorf("%w: step %d: size %d repeat %d", ErrSchedule, i+1, st.size, st.repeat)
		}
	}
	return nil
}
