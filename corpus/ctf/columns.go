package ctf

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/mapped"
)

// The index's per-sequence tables (rel, sizes, samples, labels) are built
// chunk by chunk: the indexer appends a sequence to the pending chunk, and
// closing the chunk records its per-chunk summary (sums, byte span,
// checksum) and moves its tables either onto the heap slices or, for a
// large file, into four spill files (see spill), which become the columns
// of an index file that is memory-mapped when the pass ends. A run then
// keeps the per-chunk summary in memory and, of the per-sequence tables,
// only the pages of the chunks it reads (corpus.Pager).

// pending holds the tables of the chunk being built.
type pending struct {
	rel, sizes, samples, labels []uint32
}

func (p *pending) reset() {
	p.rel, p.sizes, p.samples, p.labels = p.rel[:0], p.sizes[:0], p.samples[:0], p.labels[:0]
}

// closeChunk ends the pending chunk: its summary entries and its tables
// (to the heap slices or the spill).
func (x *index) closeChunk() {
	p := &x.pend
	if len(p.samples) == 0 {
		return
	}
	var labels []uint32
	if x.hasLabels {
		labels = p.labels
	}
	s, l := corpus.CountSums(p.samples, labels)
	last := len(p.rel) - 1
	x.chunkSamples = append(x.chunkSamples, s)
	x.chunkLabels = append(x.chunkLabels, l)
	x.chunkEnd = append(x.chunkEnd, x.chunkOff[len(x.chunkOff)-1]+int64(p.rel[last])+int64(p.sizes[last]))
	x.chunkCRC = append(x.chunkCRC, tablesCRC(p.rel, p.sizes, p.samples, p.labels, x.hasLabels))
	if x.spill != nil {
		x.spill.Write(p.rel, p.sizes, p.samples, p.labels)
	} else {
		x.rel = append(x.rel, p.rel...)
		x.sizes = append(x.sizes, p.sizes...)
		x.samples = append(x.samples, p.samples...)
		if x.hasLabels {
			x.labels = append(x.labels, p.labels...)
		}
	}
	x.n += len(p.samples)
	x.chunkStart = append(x.chunkStart, x.n)
	p.reset()
}

// tablesCRC is the checksum of one chunk's tables, as the index file stores
// them (little-endian), in the order rel, sizes, samples, labels.
func tablesCRC(rel, sizes, samples, labels []uint32, hasLabels bool) uint32 {
	var buf [4096]byte
	crc := uint32(0)
	for k, t := range [][]uint32{rel, sizes, samples, labels} {
		if k == 3 && !hasLabels {
			break
		}
		for len(t) > 0 {
			n := min(len(t), len(buf)/4)
			for i, v := range t[:n] {
				binary.LittleEndian.PutUint32(buf[4*i:], v)
			}
			crc = crc32.Update(crc, crc32.IEEETable, buf[:4*n])
			t = t[n:]
		}
	}
	return crc
}

// spillTo makes the pass spill its tables to dir (nothing when dir is "").
func (x *index) spillTo(dir string) error {
	if dir == "" {
		return nil
	}
	sp, err := mapped.NewSpill(dir, len(x.tables()))
	if err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	x.spill = sp
	return nil
}

// dropSpill removes the spill of a pass that failed.
func (x *index) dropSpill() {
	if x.spill != nil {
		x.spill.Remove()
		x.spill = nil
	}
}

// seal ends a spilled pass: the index file (key k) is written from the
// spill, at path atomically when keep, else as a temporary file in the
// spill's directory that is removed once mapped; the tables become views
// of the mapped file.
// On error the spill stays, for another seal or dropSpill.
func (x *index) seal(k cacheKey, path string, keep bool) (err error) {
	sp := x.spill
	if err := sp.Flush(); err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	samples, err := sp.Table(2)
	if err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	var labels io.Reader
	if x.hasLabels {
		if labels, err = sp.Table(3); err != nil {
			return fmt.Errorf("ctf: %w", err)
		}
	}
	if x.hash, err = corpus.HashCounts(x.chunkStart, x.n, samples, labels); err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	head := encodeSummary(k, x)
	write := func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		return sp.WriteTables(w, x.n)
	}
	if keep {
		if err := atomicfile.WriteFrom(path, 0o644, write); err != nil {
			return err
		}
	} else {
		f, err := os.CreateTemp(sp.Dir, ".batchprep-index-*")
		if err != nil {
			return fmt.Errorf("ctf: index file: %w", err)
		}
		path = f.Name()
		defer os.Remove(path)
		err = write(f)
		if err == nil {
			err = f.Sync() // so that mapFile can drop its cached pages
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("ctf: index file %s: %w", path, err)
		}
	}
	m, err := mapped.Open(path, keepResident)
	if err != nil {
		return fmt.Errorf("ctf: %w", err)
	}
	_, y, err := decodeIndex(m.Bytes())
	if err != nil {
		m.Close()
		return fmt.Errorf("ctf: index file %s: %w", path, err)
	}
	x.rel, x.sizes, x.samples, x.labels = y.rel, y.sizes, y.samples, y.labels
	x.m, x.pages = m, &mapped.Tables{File: m, Off: y.pages.Off, ChunkStart: x.chunkStart}
	x.dropSpill()
	return nil
}

// keepResident is the size up to which an index file is simply mapped and
// stays resident once read (its pages read ahead as usual): up to an index
// of about 2 GB of text, less than read's headroom, where paging it chunk
// by chunk would cost more than it saves. Tests lower it.
var keepResident int64 = 32 << 20
