package corpus

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"sync/atomic"
)

// Layout is the index of a corpus as the randomizer and the minibatch source
// see it: no data, only counts.
type Layout struct {
	// ChunkStart has one entry per chunk plus a final sentinel equal to the
	// number of sequences: chunk c holds ordinals [ChunkStart[c], ChunkStart[c+1]).
	ChunkStart []int
	// Samples[i] is sequence i's sample count as minibatch sizes count it
	// (lines, or lines of the defines-mb-size stream).
	Samples []uint32
	// Labels[i] is sequence i's sample count on the label stream, which is
	// what epoch sizes count. Nil means "same as Samples".
	Labels []uint32
	// ChunkSamples and ChunkLabels, when set (both, one entry per chunk),
	// are the per-chunk sums of Samples and of the label counts, computed
	// by the corpus when it indexed them. With them, and a hash given to
	// SetHash, nothing reads every sequence's count at open: a corpus whose
	// counts live in a mapped file keeps O(chunks) of them in memory.
	ChunkSamples []uint64
	ChunkLabels  []uint64
	// Pager, when set, owns counts kept outside the heap (see Release).
	Pager Pager

	hash atomic.Pointer[string] // Hash's result, computed once
}

// Pager is implemented by the owner of per-sequence counts kept outside the
// heap, in a memory-mapped index file.
type Pager interface {
	// Release says that the counts of chunk c are not needed for a while,
	// so their pages may leave the process's memory (they stay in the
	// file). Reading them again later is correct, only slower.
	Release(c int)
	// Need says that the counts of chunk c will be read soon: they may be
	// brought into memory in the background.
	Need(c int)
	// ReleaseAll is Release of every chunk.
	ReleaseAll()
}

// ReleaseAll passes on to the Pager that no chunk's counts are needed for
// a while (a reader closed, or idle). Without a Pager it does nothing.
func (l *Layout) ReleaseAll() {
	if l.Pager != nil {
		l.Pager.ReleaseAll()
	}
}

// Need passes on to the Pager that chunk c's counts will be read soon; a
// reader calls it when it schedules the chunk's load. Without a Pager it
// does nothing.
func (l *Layout) Need(c int) {
	if l.Pager != nil {
		l.Pager.Need(c)
	}
}

// Release passes on to the Pager that chunk c's counts are not needed for
// a while; a reader calls it when it evicts the chunk. Without a Pager it
// does nothing.
func (l *Layout) Release(c int) {
	if l.Pager != nil {
		l.Pager.Release(c)
	}
}

// SetHash records the layout's Hash computed elsewhere (by the corpus, when
// it indexed the counts), so that Hash does not read every count. It must be
// what Hash would compute.
func (l *Layout) SetHash(h string) { l.hash.Store(&h) }

// ChunkTotals returns chunk c's sample and label-sample sums: from
// ChunkSamples and ChunkLabels when set, else summed over its sequences.
func (l *Layout) ChunkTotals(c int) (samples, labels uint64) {
	if l.ChunkSamples != nil {
		return l.ChunkSamples[c], l.ChunkLabels[c]
	}
	first, end := l.Chunk(c)
	var lab []uint32
	if l.Labels != nil {
		lab = l.Labels[first:end]
	}
	return CountSums(l.Samples[first:end], lab)
}

// CountSums returns the sum of samples and the sum of labels, the label
// counts of the same sequences; nil labels means "same as samples".
func CountSums(samples, labels []uint32) (s, l uint64) {
	for _, v := range samples {
		s += uint64(v)
	}
	if labels == nil {
		return s, s
	}
	for _, v := range labels {
		l += uint64(v)
	}
	return s, l
}

// NumSequences is the number of sequences in the corpus.
func (l *Layout) NumSequences() int { return len(l.Samples) }

// NumChunks is the number of chunks.
func (l *Layout) NumChunks() int { return len(l.ChunkStart) - 1 }

// Chunk returns the ordinal range [first, end) of chunk c.
func (l *Layout) Chunk(c int) (first, end int) { return l.ChunkStart[c], l.ChunkStart[c+1] }

// ChunkOf returns the chunk that holds sequence ordinal i (binary search).
func (l *Layout) ChunkOf(i int) int {
	lo, hi := 0, l.NumChunks()
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if l.ChunkStart[m] <= i {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// LabelCount returns sequence i's label sample count.
func (l *Layout) LabelCount(i int) uint32 {
	if l.Labels == nil {
		return l.Samples[i]
	}
	return l.Labels[i]
}

// TotalSamples is the sweep size M: the sum of Samples.
func (l *Layout) TotalSamples() uint64 {
	var t uint64
	if l.ChunkSamples != nil {
		for _, s := range l.ChunkSamples {
			t += s
		}
		return t
	}
	for _, s := range l.Samples {
		t += uint64(s)
	}
	return t
}

// TotalLabels is the sum of label counts over one sweep.
func (l *Layout) TotalLabels() uint64 {
	if l.Labels == nil {
		return l.TotalSamples()
	}
	var t uint64
	if l.ChunkLabels != nil {
		for _, s := range l.ChunkLabels {
			t += s
		}
		return t
	}
	for _, s := range l.Labels {
		t += uint64(s)
	}
	return t
}

// Validate checks invariants 1 and 2. With per-chunk sums (ChunkSamples)
// it checks the chunk table and the sums' lengths only, in O(chunks): the
// corpus that gives them checks each chunk's counts when it loads the chunk.
func (l *Layout) Validate() error {
	if len(l.ChunkStart) < 1 || l.ChunkStart[0] != 0 {
		return fmt.Errorf("corpus: layout: ChunkStart must start at 0")
	}
	if l.ChunkStart[len(l.ChunkStart)-1] != len(l.Samples) {
		return fmt.Errorf("corpus: layout: last ChunkStart %d != %d sequences", l.ChunkStart[len(l.ChunkStart)-1], len(l.Samples))
	}
	for c := 1; c < len(l.ChunkStart); c++ {
		if l.ChunkStart[c] <= l.ChunkStart[c-1] {
			return fmt.Errorf("corpus: layout: chunk %d is empty or out of order", c-1)
		}
	}
	if l.ChunkSamples != nil || l.ChunkLabels != nil {
		if len(l.ChunkSamples) != l.NumChunks() || len(l.ChunkLabels) != l.NumChunks() {
			return fmt.Errorf("corpus: layout: %d and %d chunk sums for %d chunks", len(l.ChunkSamples), len(l.ChunkLabels), l.NumChunks())
		}
		for c, s := range l.ChunkSamples {
			if s < uint64(l.ChunkStart[c+1]-l.ChunkStart[c]) {
				return fmt.Errorf("corpus: layout: chunk %d has fewer samples than sequences", c)
			}
		}
	} else {
		for i, s := range l.Samples {
			if s == 0 {
				return fmt.Errorf("corpus: layout: sequence %d has no samples", i)
			}
		}
	}
	if l.Labels != nil && len(l.Labels) != len(l.Samples) {
		return fmt.Errorf("corpus: layout: %d label counts for %d sequences", len(l.Labels), len(l.Samples))
	}
	return nil
}

// HashCounts computes the Hash of the layout with the chunk table
// chunkStart and n sequences whose sample counts (and label counts, when
// labels is not nil) are read, little-endian uint32, from samples and
// labels: a corpus that writes its counts to disk as it indexes them gives
// the hash to SetHash without holding them.
func HashCounts(chunkStart []int, n int, samples, labels io.Reader) (string, error) {
	h := fnv.New64a()
	out := make([]byte, 0, 64<<10)
	put := func(v uint64) {
		if len(out)+8 > cap(out) {
			h.Write(out)
			out = out[:0]
		}
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	put(uint64(len(chunkStart)))
	for _, c := range chunkStart {
		put(uint64(c))
	}
	put(uint64(n))
	rs := bufio.NewReaderSize(samples, 256<<10)
	var rl *bufio.Reader
	if labels != nil {
		rl = bufio.NewReaderSize(labels, 256<<10)
	}
	var b [4]byte
	for range n {
		if _, err := io.ReadFull(rs, b[:]); err != nil {
			return "", fmt.Errorf("corpus: layout counts: %w", err)
		}
		s := binary.LittleEndian.Uint32(b[:])
		l := s
		if rl != nil {
			if _, err := io.ReadFull(rl, b[:]); err != nil {
				return "", fmt.Errorf("corpus: layout counts: %w", err)
			}
			l = binary.LittleEndian.Uint32(b[:])
		}
		put(uint64(s)<<32 | uint64(l))
	}
	h.Write(out)
	return strconv.FormatUint(h.Sum64(), 16), nil
}

// Hash identifies the layout: an FNV-64a hash, in hex, of the chunk
// boundaries and of every sequence's sample and label counts, which a saved
// position records so that it is not restored on another corpus. It reads
// every count once and keeps the result, so a Layout must not change after
// its first Hash (the corpora in this module build theirs once).
func (l *Layout) Hash() string {
	if h := l.hash.Load(); h != nil {
		return *h
	}
	h := fnv.New64a()
	buf := make([]byte, 0, 4096)
	flush := func() { h.Write(buf); buf = buf[:0] }
	put := func(v uint64) {
		if len(buf)+8 > cap(buf) {
			flush()
		}
		buf = binary.LittleEndian.AppendUint64(buf, v)
	}
	put(uint64(len(l.ChunkStart)))
	for _, c := range l.ChunkStart {
		put(uint64(c))
	}
	put(uint64(len(l.Samples)))
	for i, s := range l.Samples {
		put(uint64(s)<<32 | uint64(l.LabelCount(i)))
	}
	flush()
	sum := strconv.FormatUint(h.Sum64(), 16)
	l.hash.Store(&sum)
	return sum
}
