package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/file"
	"github.com/batchprep/batchprep/corpus/mixture"
	"github.com/batchprep/batchprep/corpus/source"
	"github.com/batchprep/batchprep/internal/ordered"
)

// mixOpenWorkers is how many corpora of a mixture open at once (a
// variable for the benchmark's one-at-a-time baseline).
var mixOpenWorkers = file.MixOpens

// heldWarnings passes one corpus's warnings to out, holding those that
// come before release (while the corpora before it are still opening).
type heldWarnings struct {
	mu       sync.Mutex
	out      func(ctf.Error)
	held     []ctf.Error
	released bool
}

func (h *heldWarnings) warn(e ctf.Error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.released {
		h.out(e)
		return
	}
	h.held = append(h.held, e)
}

// release passes the held warnings on, and every later one at once.
func (h *heldWarnings) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.held {
		h.out(e)
	}
	h.held, h.released = nil, true
}

// runReadMix is read with --mix: several corpora read as one weighted
// mixture (corpus/mixture, docs/mixtures.md). Every other flag keeps its
// meaning, applied to the mixture's timeline; each corpus is opened with the
// same --stream and chunking flags.
func runReadMix(env *Env, f *readFlags) error {
	specs := make([]mixture.Spec, len(f.mix))
	ws := make([]mixture.Weight, len(f.mix))
	for i, a := range f.mix {
		sp, err := mixture.ParseSpec(a)
		if err != nil {
			return usagef("%v", err)
		}
		specs[i] = sp
		ws[i] = sp.Weight
	}
	if _, err := mixture.Integers(ws); err != nil {
		return usagef("--mix: %v (corpus k is the k-th --mix, from 0)", err)
	}
	ctfCfg, srcCfg, startPos, err := f.configs()
	if err != nil {
		return err
	}
	diag := &readDiagnostics{w: env.Stderr}
	ctfCfg.Warn = diag.warn
	var readers []file.Reader
	defer func() {
		for _, r := range readers {
			r.Close()
		}
	}()
	openCtx, stopOpen := openContext(env.Ctx)
	defer stopOpen()
	if f.publishIndex && !slices.ContainsFunc(specs, func(sp mixture.Spec) bool { return file.IsObject(sp.Path) }) {
		return usagef("--publish-index: no --mix corpus is an object; an index is published beside an object (s3://BUCKET/KEY)")
	}
	// Parquet objects open at once, the others one at a time beside them
	// (file.OpensAtOnce). Each corpus's warnings are held until the ones
	// before it have opened, so stderr reads as if they had opened in turn.
	corpora := make([]mixture.Corpus, len(specs))
	held := make([]*heldWarnings, len(specs))
	for i := range held {
		held[i] = &heldWarnings{out: diag.warn}
	}
	var serial sync.Mutex
	var openErr error
	ordered.Open(openCtx, len(specs), mixOpenWorkers, func(ctx context.Context, i int) (file.Reader, error) {
		path := specs[i].Path
		if !file.OpensAtOnce(path) {
			serial.Lock()
			defer serial.Unlock()
		}
		cfg := ctfCfg
		cfg.Warn = held[i].warn
		return file.OpenWith(ctx, path, cfg, file.Options{Objects: f.objectOptions(srcCfg)})
	}, func(i int, r file.Reader, err error) bool {
		held[i].release()
		if err != nil {
			openErr = fmt.Errorf("--mix %d (%s): %w", i, specs[i].Path, err)
			return false
		}
		readers = append(readers, r)
		if err := checkChunkMemory(specs[i].Path, r.Layout(), r.Streams(), physicalMemory()); err != nil {
			openErr = err
			return false
		}
		corpora[i] = mixture.Corpus{Source: r, Weight: specs[i].Weight, Name: specs[i].Path}
		return true
	}, func(r file.Reader) { r.Close() })
	if openErr != nil {
		return openErr
	}
	if f.publishIndex {
		if err := publishIndexes(env, f, srcCfg, readers); err != nil {
			return err
		}
	}
	mx, err := mixture.New(corpora, srcCfg)
	if err != nil {
		return err
	}
	defer mx.Close()
	if err := f.position(mx, startPos); err != nil {
		return err
	}
	restore, err := applyMixMemoryLimit(f, readers, mx, ctfCfg.ChunkBytes)
	if err != nil {
		return err
	}
	defer restore()
	diag.flush()
	startState := mx.State()
	delivered, totals, runErr := readLoop(env, f, mixSteps(mx, specs, readers), diag)
	mx.Close()
	diag.flush()
	for i, r := range readers {
		if s := summaryNoTotals(r); s.BadSequences > 0 {
			fmt.Fprintf(env.Stderr, "batchprep read: --mix %d (%s): bad sequences found: %d (%s)\n", i, specs[i].Path, s.BadSequences, kindCounts(s.Skipped))
		}
	}
	if runErr == nil && totals.minibatches == 0 {
		fmt.Fprintf(env.Stderr, "batchprep read: %s\n", nothingRead(f, startState))
	}
	if f.stateOut != "" {
		if err := source.WriteStateFile(f.stateOut, delivered); err != nil {
			return errors.Join(runErr, err)
		}
	}
	return runErr
}

// mixSteps are the steps of a mixture.
func mixSteps(mx *mixture.Mixture, specs []mixture.Spec, readers []file.Reader) readSteps {
	paths := make([]string, len(specs))
	for k, s := range specs {
		paths[k] = s.Path
	}
	return readSteps{state: mx.State, epoch: mx.Epoch, streams: mx.Streams(), corpora: paths, readers: readers,
		next: func() (*source.Minibatch, *mixture.Minibatch, error) {
			mb, err := mx.Next()
			if err != nil {
				return nil, nil, err
			}
			return &mb.Minibatch, mb, nil
		}}
}

// applyMixMemoryLimit is applyMemoryLimit for a mixture: with "auto", the
// bound is every corpus's window (its resident chunks times its chunk size)
// plus the headroom of one read.
func applyMixMemoryLimit(f *readFlags, readers []file.Reader, mx *mixture.Mixture, chunkBytes int64) (func(), error) {
	limit, auto, err := parseMemoryLimit(f.memoryLimit)
	if err != nil {
		return nil, usagef("--memory-limit %q: %v", f.memoryLimit, err)
	}
	if auto {
		if os.Getenv("GOMEMLIMIT") != "" {
			return func() {}, nil
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var window int64
		for k, n := range mx.ResidentChunks() {
			per := chunkBytes
			if info, err := os.Stat(readers[k].Path()); err == nil {
				per = max(per, info.Size()/int64(max(readers[k].Layout().NumChunks(), 1)))
			}
			window += int64(n) * per
		}
		limit = source.MemoryLimit(int64(ms.HeapInuse), window)
	}
	if limit == 0 {
		return func() {}, nil
	}
	old := debug.SetMemoryLimit(limit)
	if !auto {
		return func() { debug.SetMemoryLimit(old) }, nil
	}
	stop := followLive(limit)
	return func() { stop(); debug.SetMemoryLimit(old) }, nil
}
