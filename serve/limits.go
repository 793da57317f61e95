package serve

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/graph/plan"
)

// The default limits per minibatch (invariant 11). A minibatch is packed
// whole in memory before it is sent, so these bound what one call can make
// the server hold.
const (
	DefaultMaxMinibatchBytes   = 256 << 20
	DefaultMaxMinibatchSamples = 1 << 20
	// DefaultMaxWindowBytes bounds the text of the chunks a call's
	// randomization window may hold: CNTK's defaults (128 chunks of 32
	// MiB) fit, so --randomize cntk works on any corpus at its defaults.
	DefaultMaxWindowBytes = 4 << 30
)

// maxScheduleSize returns the largest size of a schedule written as
// source.Schedule.String writes it ("256", "64*2:128").
func maxScheduleSize(sched string) int {
	most := 0
	for _, tok := range strings.Split(sched, ":") {
		v, _, _ := strings.Cut(tok, "*")
		if n, err := strconv.Atoi(v); err == nil && n > most {
			most = n
		}
	}
	return most
}

// checkLimits refuses a request whose minibatches would exceed the
// server's limits before anything is read: more samples than
// MaxMinibatchSamples, or dense rows alone past MaxMinibatchBytes.
func (s *Server) checkLimits(setup *sequenceSetup) error {
	field, k := "k", setup.k
	if k == 0 {
		field, k = "mb", maxScheduleSize(setup.built.Source.Schedule.String())
	}
	if k > s.opts.MaxMinibatchSamples {
		return status.Errorf(codes.InvalidArgument, "%s %d: more samples per minibatch than this server's limit of %d (serve --max-minibatch-samples)",
			field, k, s.opts.MaxMinibatchSamples)
	}
	var dense int64
	for _, st := range setup.built.CTF.Streams {
		if !st.Sparse {
			dense += 4 * int64(st.Dim)
		}
	}
	if need := int64(k) * dense; need > s.opts.MaxMinibatchBytes {
		return status.Errorf(codes.InvalidArgument, "%s %d: the dense rows of a minibatch alone take %d bytes, more than this server's limit of %d bytes (serve --max-minibatch-bytes)",
			field, k, need, s.opts.MaxMinibatchBytes)
	}
	return nil
}

// chunkSizes is what a corpus reader that knows its chunks' sizes offers
// (ctf.Session).
type chunkSizes interface {
	ChunkBytes(c int) int64
}

// checkWindow refuses a call whose randomization windows pass
// MaxWindowBytes, before any chunk is parsed (invariant 11). A corpus's
// window holds at most residentChunks chunks (as its source sized its
// cache), so the most text it can hold is that many of the corpus's largest
// chunks, as the index measured them: chunks cut by chunk_sequences are as
// small as their sequences, not the chunk_bytes a chunk cut by size may
// reach. A reader that does not know its chunks' sizes counts chunk_bytes
// each. A mixture's corpora each have a window: their sum counts.
func (s *Server) checkWindow(setup *sequenceSetup, srcs []corpus.Source, residentChunks []int) error {
	var need, chunks int64
	for i, src := range srcs {
		n := min(residentChunks[i], src.Layout().NumChunks())
		need += windowBytes(setup, src, n)
		chunks += int64(n)
	}
	if need <= s.opts.MaxWindowBytes {
		return nil
	}
	field := "window_chunks"
	if setup.built.Source.Randomize.WindowSamples > 0 {
		field = "window_samples"
	}
	if len(srcs) > 1 {
		return status.Errorf(codes.InvalidArgument, "%s: the randomization windows of the mixture's %d corpora hold up to %d chunks, up to %d bytes of text (each corpus's largest chunks), more than this server's limit of %d bytes (serve --max-window-bytes); ask for a smaller window, smaller chunks (chunk_bytes or chunk_sequences) or fewer corpora",
			field, len(srcs), chunks, need, s.opts.MaxWindowBytes)
	}
	return status.Errorf(codes.InvalidArgument, "%s: the randomization window holds up to %d chunks of this corpus, up to %d bytes of text (its %d largest chunks), more than this server's limit of %d bytes (serve --max-window-bytes); ask for a smaller window or smaller chunks (chunk_bytes or chunk_sequences)",
		field, chunks, need, chunks, s.opts.MaxWindowBytes)
}

// windowBytes is the most text n chunks of src can hold: its n largest.
func windowBytes(setup *sequenceSetup, src corpus.Source, n int) int64 {
	size := func(int) int64 { return ctf.DefaultChunkBytes }
	if measured, ok := src.(chunkSizes); ok {
		size = measured.ChunkBytes
	} else if b := setup.built.CTF.ChunkBytes; b > 0 {
		size = func(int) int64 { return b }
	}
	return largestSum(src.Layout().NumChunks(), n, size)
}

// largestSum returns the sum of the n largest of size(0), ..., size(count-1),
// keeping only those n (a min-heap of them) rather than sorting every
// chunk's size: a corpus cut into one-sequence chunks has millions.
func largestSum(count, n int, size func(c int) int64) int64 {
	if n <= 0 {
		return 0
	}
	top := make([]int64, 0, n)
	down := func(i int) { // restore the heap below i
		for {
			l, least := 2*i+1, i
			if l < len(top) && top[l] < top[least] {
				least = l
			}
			if r := l + 1; r < len(top) && top[r] < top[least] {
				least = r
			}
			if least == i {
				return
			}
			top[i], top[least] = top[least], top[i]
			i = least
		}
	}
	for c := range count {
		b := size(c)
		switch {
		case len(top) < n:
			top = append(top, b)
			for i := len(top) - 1; i > 0 && top[(i-1)/2] > top[i]; i = (i - 1) / 2 {
				top[i], top[(i-1)/2] = top[(i-1)/2], top[i]
			}
		case b > top[0]:
			top[0] = b
			down(0)
		}
	}
	var sum int64
	for _, b := range top {
		sum += b
	}
	return sum
}

// tooBig is the error for a minibatch whose encoding passed the limit.
func (s *Server) tooBig(step uint64, size int) error {
	return status.Errorf(codes.ResourceExhausted, "minibatch %d: %d bytes encoded, more than this server's limit of %d bytes (serve --max-minibatch-bytes); ask for smaller minibatches (mb or k)",
		step, size, s.opts.MaxMinibatchBytes)
}

// batchRecordBytes is what a graph batch record's arrays take per edge
// without weights: its ordinal (8 bytes), lhs, rhs and relation (4 each).
// Weights add 4.
const batchRecordBytes = 20

// checkBatchSize refuses a graph config whose batch records alone would
// pass MaxMinibatchBytes, before anything is read (invariant 11).
func (s *Server) checkBatchSize(config string, batchSize int) error {
	if need := int64(batchSize) * batchRecordBytes; need > s.opts.MaxMinibatchBytes {
		return status.Errorf(codes.InvalidArgument, "config: %q: batch_size %d: a batch record takes at least %d bytes (%d per edge), more than this server's limit of %d bytes (serve --max-minibatch-bytes)",
			config, batchSize, need, batchRecordBytes, s.opts.MaxMinibatchBytes)
	}
	return nil
}

// recordFits ends a graph call whose next record's arrays (n bytes) would
// pass MaxMinibatchBytes, before they are allocated: a bucket's holdout, or
// a batch with weights that the check of batch_size let through.
func (s *Server) recordFits(rec *plan.Record, n int64) error {
	if n <= s.opts.MaxMinibatchBytes {
		return nil
	}
	what := fmt.Sprintf("batch %d of worker %d", rec.Batch, rec.Worker)
	if rec.Kind == plan.BucketRecord {
		what = fmt.Sprintf("the holdout of bucket (%d, %d)", rec.Bucket.Lhs, rec.Bucket.Rhs)
	}
	return status.Errorf(codes.ResourceExhausted, "epoch %d, edge set %d, chunk %d: %s takes %d bytes, more than this server's limit of %d bytes (serve --max-minibatch-bytes); lower batch_size or eval_fraction",
		rec.Epoch, rec.EdgeSet, rec.Chunk, what, n, s.opts.MaxMinibatchBytes)
}
