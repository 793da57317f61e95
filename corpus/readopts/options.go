package readopts

import (
	"fmt"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
)

// Options are the choices of `batchprep read` that shape the minibatches,
// with the flags' names in the comments. Given records which of the fields
// whose zero value is meaningful were set explicitly (by flag name:
// "window-samples", "chunk-sequences", "chunk-bytes", "window-chunks",
// "start"); Defaults gives the rest.
type Options struct {
	Streams        []string // stream, NAME:DIM[:sparse]
	DefinesMBSize  string   // defines-mb-size
	Label          string   // label
	MB             string   // mb
	EpochSize      string   // epoch-size
	Epochs         int      // epochs
	MaxMinibatches int64    // max-minibatches
	Randomize      string   // randomize
	WindowChunks   int      // window-chunks
	WindowSamples  uint64   // window-samples
	Seed           uint64   // seed
	ChunkBytes     int64    // chunk-bytes
	ChunkSequences int      // chunk-sequences
	Workers, Rank  int      // workers, rank
	Split          string   // split: "balanced" (the default, "" too) or "chunks"
	CutAtSweep     bool     // cut-at-sweep
	Start          uint64   // start
	HasState       bool     // state-in: a state to resume from is given
	MaxErrors      int      // max-errors
	CacheIndex     bool     // cache-index
	PrefetchChunks int      // prefetch-chunks
	Given          map[string]bool
}

// The defaults that differ from SPEC A6 (docs/source.md, "Defaults"). SPEC
// A6 names 32 MiB chunks; with 1 MiB chunks a 128-chunk window is a fraction
// of a large corpus, so the next window parses (64 chunks of it ahead) while
// this one is read, and file order parses chunks on every core without a
// chunk's worth of fresh memory per step. --chunk-bytes 32MiB gives SPEC's
// chunking back; the minibatches do not depend on it except through the
// window, which is counted in chunks.
//
// CNTKChunkBytes is the chunk size when the randomizer is cntk and no chunk
// size is given: CNTK's own, since CNTK's order (chunks shuffled, then
// sequences within a window of chunks) depends on where the chunks end.
const (
	DefaultChunkBytes     = 1 << 20
	CNTKChunkBytes        = ctf.DefaultChunkBytes
	DefaultPrefetchChunks = 64
)

// Defaults returns the defaults (invariant 1).
func Defaults() Options {
	return Options{MB: "256", EpochSize: "full", Epochs: 1, Randomize: "window",
		WindowChunks: 128, ChunkBytes: DefaultChunkBytes, Workers: 1, PrefetchChunks: DefaultPrefetchChunks}
}

// Built is what Options turn into: the reader's and the source's
// configurations, and the start position when one was given.
type Built struct {
	CTF      ctf.Config
	Source   source.Config
	Start    uint64
	HasStart bool
}

// Build checks o and converts it (invariants 2, 3). The source prefetches.
func (o *Options) Build() (Built, error) {
	var b Built
	cc, sc := &b.CTF, &b.Source
	if len(o.Streams) == 0 {
		return b, fieldErrorf("stream", "at least one {stream} NAME:DIM[:sparse] is required")
	}
	for _, s := range o.Streams {
		st, err := ctf.ParseStreamFlag(s)
		if err != nil {
			return b, fieldErrorf("stream", fmt.Sprintf("{stream} %s: %v", s, err))
		}
		cc.Streams = append(cc.Streams, st)
	}
	cc.DefinesMBSize, cc.Label, cc.MaxErrors, cc.CacheIndex = o.DefinesMBSize, o.Label, o.MaxErrors, o.CacheIndex
	switch {
	case o.Given["chunk-bytes"] && o.Given["chunk-sequences"]:
		return b, fieldErrorf("chunk-bytes", "{chunk-bytes} and {chunk-sequences} exclude each other")
	case o.Given["chunk-sequences"]:
		if o.ChunkSequences < 1 {
			return b, fieldErrorf("chunk-sequences", fmt.Sprintf("{chunk-sequences} %d: must be >= 1", o.ChunkSequences))
		}
		cc.ChunkSequences = o.ChunkSequences
	case o.Randomize == "cntk" && !o.Given["chunk-bytes"]:
		cc.ChunkBytes = CNTKChunkBytes
	default:
		if o.ChunkBytes < 1 {
			return b, fieldErrorf("chunk-bytes", fmt.Sprintf("{chunk-bytes} %d: must be >= 1", o.ChunkBytes))
		}
		cc.ChunkBytes = o.ChunkBytes
	}
	if o.MaxErrors < 0 {
		return b, fieldErrorf("max-errors", fmt.Sprintf("{max-errors} %d: must be >= 0", o.MaxErrors))
	}
	if err := cc.Validate(); err != nil {
		return b, fieldErrorf("stream", err.Error()) // names the stream or key itself
	}
	var err error
	if sc.Schedule, err = source.ParseSchedule(o.MB); err != nil {
		return b, fieldErrorf("mb", fmt.Sprintf("{mb}: %v", err))
	}
	if sc.EpochSize, err = source.ParseEpochSize(o.EpochSize); err != nil {
		return b, fieldErrorf("epoch-size", fmt.Sprintf("{epoch-size}: %v", err))
	}
	if o.Epochs < 1 {
		return b, fieldErrorf("epochs", fmt.Sprintf("{epochs} %d: must be >= 1", o.Epochs))
	}
	if o.MaxMinibatches < 0 {
		return b, fieldErrorf("max-minibatches", fmt.Sprintf("{max-minibatches} %d: must be >= 0", o.MaxMinibatches))
	}
	switch o.Randomize {
	case "none", "cntk", "window":
	default:
		return b, fieldErrorf("randomize", fmt.Sprintf("{randomize} %q: want none, cntk or window", o.Randomize))
	}
	sc.Randomize = randomize.Config{Kind: o.Randomize, Seed: o.Seed, WindowChunks: o.WindowChunks}
	switch {
	case o.Given["window-chunks"] && o.Given["window-samples"]:
		return b, fieldErrorf("window-chunks", "{window-chunks} and {window-samples} exclude each other")
	case o.Given["window-samples"]:
		if o.WindowSamples < 1 {
			return b, fieldErrorf("window-samples", fmt.Sprintf("{window-samples} %d: must be >= 1", o.WindowSamples))
		}
		sc.Randomize.WindowChunks, sc.Randomize.WindowSamples = 0, o.WindowSamples
	case o.WindowChunks < 1:
		return b, fieldErrorf("window-chunks", fmt.Sprintf("{window-chunks} %d: must be >= 1", o.WindowChunks))
	}
	if o.Workers < 1 {
		return b, fieldErrorf("workers", fmt.Sprintf("{workers} %d: must be >= 1", o.Workers))
	}
	if o.Rank < 0 || o.Rank >= o.Workers {
		return b, fieldErrorf("rank", fmt.Sprintf("{rank} %d: must be in [0, %d)", o.Rank, o.Workers))
	}
	if o.PrefetchChunks < 0 {
		return b, fieldErrorf("prefetch-chunks", fmt.Sprintf("{prefetch-chunks} %d: must be >= 0", o.PrefetchChunks))
	}
	switch o.Split {
	case "", "balanced":
	case "chunks":
		if o.Randomize == "none" {
			return b, fieldErrorf("split", "{split} chunks needs a randomized order ({randomize} window or cntk): in file order a minibatch lies in one or two chunks, so one rank would get it all")
		}
		sc.SplitChunks = true
	default:
		return b, fieldErrorf("split", fmt.Sprintf("{split} %q: want balanced or chunks", o.Split))
	}
	sc.Workers, sc.Rank, sc.CutAtSweep, sc.Prefetch = o.Workers, o.Rank, o.CutAtSweep, true
	sc.PrefetchChunks = o.PrefetchChunks
	if o.Given["start"] {
		if o.HasState {
			return b, fieldErrorf("start", "{start} and {state-in} exclude each other")
		}
		b.Start, b.HasStart = o.Start, true
	}
	return b, nil
}
