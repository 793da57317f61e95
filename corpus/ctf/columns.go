package ctf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"strconv"
	"unsafe"

	"github.com/batchprep/batchprep/internal/atomicfile"
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
	var s, l uint64
	for i, v := range p.samples {
		s += uint64(v)
		if x.hasLabels {
			l += uint64(p.labels[i])
		}
	}
	if !x.hasLabels {
		l = s
	}
	last := len(p.rel) - 1
	x.chunkSamples = append(x.chunkSamples, s)
	x.chunkLabels = append(x.chunkLabels, l)
	x.chunkEnd = append(x.chunkEnd, x.chunkOff[len(x.chunkOff)-1]+int64(p.rel[last])+int64(p.sizes[last]))
	x.chunkCRC = append(x.chunkCRC, tablesCRC(p.rel, p.sizes, p.samples, p.labels, x.hasLabels))
	if x.spill != nil {
		x.spill.write(p)
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

// spill writes the per-sequence tables to four temporary files, one per
// table, so that the index pass holds only the pending chunk's.
type spill struct {
	dir   string
	files [4]*os.File
	w     [4]*bufio.Writer
	buf   []byte
	err   error
}

func newSpill(dir string, hasLabels bool) (*spill, error) {
	s := &spill{dir: dir}
	n := 3
	if hasLabels {
		n = 4
	}
	for k := range n {
		f, err := os.CreateTemp(dir, ".batchprep-index-*")
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("ctf: index spill: %w", err)
		}
		s.files[k], s.w[k] = f, bufio.NewWriterSize(f, 256<<10)
	}
	return s, nil
}

func (s *spill) write(p *pending) {
	for k, t := range [][]uint32{p.rel, p.sizes, p.samples, p.labels} {
		if s.w[k] == nil || s.err != nil {
			continue
		}
		s.buf = s.buf[:0]
		for _, v := range t {
			s.buf = binary.LittleEndian.AppendUint32(s.buf, v)
		}
		if _, err := s.w[k].Write(s.buf); err != nil {
			s.err = fmt.Errorf("ctf: index spill: %w", err)
		}
	}
}

// remove closes and deletes the spill files.
func (s *spill) remove() {
	for _, f := range s.files {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
}

// flush ends the writes and rewinds the files for reading.
func (s *spill) flush() error {
	for k, w := range s.w {
		if w == nil || s.err != nil {
			continue
		}
		if err := w.Flush(); err != nil {
			s.err = fmt.Errorf("ctf: index spill: %w", err)
		} else if _, err := s.files[k].Seek(0, io.SeekStart); err != nil {
			s.err = fmt.Errorf("ctf: index spill: %w", err)
		}
	}
	return s.err
}

// layoutHash computes corpus.Layout.Hash of the index's layout from the
// chunk table and the spilled sample and label tables, read once in order:
// the mapped index then never reads every count to answer Hash.
func (x *index) layoutHash(samples, labels io.Reader) (string, error) {
	h := fnv.New64a()
	out := make([]byte, 0, 64<<10)
	put := func(v uint64) {
		if len(out)+8 > cap(out) {
			h.Write(out)
			out = out[:0]
		}
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	put(uint64(len(x.chunkStart)))
	for _, c := range x.chunkStart {
		put(uint64(c))
	}
	put(uint64(x.n))
	rs := bufio.NewReaderSize(samples, 256<<10)
	var rl *bufio.Reader
	if labels != nil {
		rl = bufio.NewReaderSize(labels, 256<<10)
	}
	var b [4]byte
	for range x.n {
		if _, err := io.ReadFull(rs, b[:]); err != nil {
			return "", fmt.Errorf("ctf: index spill: %w", err)
		}
		s := binary.LittleEndian.Uint32(b[:])
		l := s
		if rl != nil {
			if _, err := io.ReadFull(rl, b[:]); err != nil {
				return "", fmt.Errorf("ctf: index spill: %w", err)
			}
			l = binary.LittleEndian.Uint32(b[:])
		}
		put(uint64(s)<<32 | uint64(l))
	}
	h.Write(out)
	return strconv.FormatUint(h.Sum64(), 16), nil
}

// littleEndian is true on hosts whose uint32 layout is the index file's.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// u32s returns the n little-endian uint32 at the start of b: a view of b's
// memory when the host is little-endian and b is aligned, else a copy.
func u32s(b []byte, n int) []uint32 {
	if n == 0 {
		return []uint32{}
	}
	b = b[:4*n]
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// spillTo makes the pass spill its tables to dir (nothing when dir is "").
func (x *index) spillTo(dir string) error {
	if dir == "" {
		return nil
	}
	sp, err := newSpill(dir, x.hasLabels)
	if err != nil {
		return err
	}
	x.spill = sp
	return nil
}

// dropSpill removes the spill of a pass that failed.
func (x *index) dropSpill() {
	if x.spill != nil {
		x.spill.remove()
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
	if err := sp.flush(); err != nil {
		return err
	}
	var labels io.Reader
	if x.hasLabels {
		labels = sp.files[3]
	}
	if x.hash, err = x.layoutHash(sp.files[2], labels); err != nil {
		return err
	}
	head := encodeSummary(k, x)
	write := func(w io.Writer) error {
		if _, err := w.Write(head); err != nil {
			return err
		}
		for _, f := range sp.files {
			if f == nil {
				continue
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			if _, err := io.Copy(w, f); err != nil {
				return err
			}
			if _, err := w.Write(make([]byte, padTo(4*x.n))); err != nil {
				return err
			}
		}
		return nil
	}
	if keep {
		if err := atomicfile.WriteFrom(path, 0o644, write); err != nil {
			return err
		}
	} else {
		f, err := os.CreateTemp(sp.dir, ".batchprep-index-*")
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
	m, err := mapFile(path)
	if err != nil {
		return err
	}
	_, y, err := decodeIndex(m.data)
	if err != nil {
		m.close()
		return fmt.Errorf("ctf: index file %s: %w", path, err)
	}
	x.rel, x.sizes, x.samples, x.labels = y.rel, y.sizes, y.samples, y.labels
	x.m, x.tableOff = m, y.tableOff
	x.dropSpill()
	return nil
}

// Release implements corpus.Pager for a mapped index: chunk c's tables may
// leave memory.
//
// A chunk's pages leave the resident set. They stay in the page cache
// (evicting them there costs more than it saves, chunk by chunk), where a
// fault nearby could map them back (fault-around maps the cached pages
// around a fault): so once the chunks released add up to releaseAll bytes
// of tables, all the tables leave the resident set and the page cache;
// the pages of the chunks in use come back at the next read.
func (x *index) Release(c int) {
	if x.m == nil {
		return
	}
	first, last := x.chunkStart[c], x.chunkStart[c+1]
	n := int64(4 * (last - first) * len(x.tableOff))
	tables := len(x.m.data) - x.tableOff[0]
	if x.released.Add(n) >= min(releaseAll, int64(tables/8)) {
		x.ReleaseAll()
		return
	}
	for _, off := range x.tableOff {
		x.m.release(off+4*first, 4*(last-first), false)
	}
}

// ReleaseAll implements corpus.Pager: every table leaves the resident set
// and the page cache.
func (x *index) ReleaseAll() {
	if x.m == nil {
		return
	}
	x.released.Store(0)
	x.m.release(x.tableOff[0], len(x.m.data)-x.tableOff[0], true)
}

// Need implements corpus.Pager: chunk c's tables, and the next chunk's
// (file order reads it next, and a reader looks at sequence counts a
// little ahead of the chunks it loads), are read into memory in the
// background.
func (x *index) Need(c int) {
	if x.m == nil {
		return
	}
	first, last := x.chunkStart[c], x.chunkStart[min(c+2, len(x.chunkStart)-1)]
	for _, off := range x.tableOff {
		x.m.need(off+4*first, 4*(last-first))
	}
}

// releaseAll is the bytes of tables released chunk by chunk after which
// Release releases all of them (an eighth of the tables when less).
const releaseAll = 8 << 20
