package ctf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/mapped"
)

// The index file (the cache, and the file a large pass maps), little-endian:
//
//	magic "BPCTFIDX", version u32, summary length u64, then the summary:
//	key: file size i64, mtime ns i64, FNV-64a of the first and of the last
//	     64 KiB u64 u64, FNV-64a of the indexing config u64,
//	lineMode u8, hasLabels u8, sequences u64, chunks u64,
//	skippedLines i64, lastLine i64, lastCol i64, layout hash u64,
//	dropped u32, each {line i64, offset i64, msg len u32, msg},
//	skipped u32, each {line i64, offset i64},
//	per chunk: chunkOff i64, chunkLine i64, chunkEnd i64, samples u64,
//	     labels u64, checksum u32 (CRC-32 of its tables below, in order),
//	chunkStart [chunks+1]u64,
//	CRC-32 (IEEE) of all the preceding bytes u32;
//	zeros to the next multiple of 4096, then the per-sequence tables, each
//	[sequences]u32 padded with zeros to a multiple of 4096: rel, sizes,
//	samples, labels (when hasLabels).
//
// The summary is read and checked at open; the tables are memory-mapped,
// and a chunk's tables are checked against its checksum when a reader
// first parses the chunk (checkChunk), so opening costs O(chunks).
const (
	cacheMagic   = "BPCTFIDX"
	cacheVersion = 3
	cacheEdge    = 64 << 10
)

// cacheKey identifies the data and the configuration an index was built for.
type cacheKey struct {
	size, mtime      int64
	head, tail, conf uint64
}

func cachePath(path string, cfg *Config) string {
	if cfg.CacheDir != "" {
		return filepath.Join(cfg.CacheDir, filepath.Base(path)+".batchprep-index")
	}
	return path + ".batchprep-index"
}

// configHash hashes the config fields that change the index.
func configHash(cfg *Config) uint64 {
	h := fnv.New64a()
	for _, s := range cfg.Streams {
		fmt.Fprintf(h, "%q:%d:%t;", s.Name, s.Dim, s.Sparse)
	}
	fmt.Fprintf(h, "mb=%q;label=%q;cb=%d;cs=%d;line=%t", cfg.DefinesMBSize, cfg.Label, cfg.chunkBytes(), cfg.ChunkSequences, cfg.LineMode)
	return h.Sum64()
}

func keyOf(f corpus.Blob, cfg *Config) (cacheKey, error) {
	st, err := f.Stat()
	if err != nil {
		return cacheKey{}, err
	}
	k := cacheKey{size: st.Size(), mtime: st.ModTime().UnixNano(), conf: configHash(cfg)}
	if v, ok := f.(corpus.Versioned); ok {
		// An object's version (its ETag) stands where a file's
		// modification time does.
		h := fnv.New64a()
		h.Write([]byte(v.Version()))
		k.mtime = int64(h.Sum64())
	}
	buf := make([]byte, min(cacheEdge, k.size))
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return k, err
	}
	h := fnv.New64a()
	h.Write(buf)
	k.head = h.Sum64()
	if _, err := f.ReadAt(buf, k.size-int64(len(buf))); err != nil && err != io.EOF {
		return k, err
	}
	h.Reset()
	h.Write(buf)
	k.tail = h.Sum64()
	return k, nil
}

// loadCache returns the cached index when the cache file exists, decodes and
// matches the data and config. A missing cache gives an error for which
// os.IsNotExist is true. The index's tables are views of the mapped file.
func loadCache(f corpus.Blob, path string, cfg *Config) (*index, error) {
	m, err := mapped.Open(cachePath(path, cfg), keepResident)
	if err != nil {
		return nil, err
	}
	x, err := decodeFor(m, f, cfg)
	if err != nil {
		m.Close()
		return nil, err
	}
	for i := range x.dropped {
		x.dropped[i].File = path
	}
	x.m, x.pages = m, &mapped.Tables{File: m, Off: x.pages.Off, ChunkStart: x.chunkStart}
	if int64(x.n)*16 <= checkAtOpen {
		// A small index is checked whole: a damaged one is rebuilt now,
		// not found damaged by a chunk read later.
		if off := x.pages.Off; len(off) > 0 {
			m.Need(off[0], len(m.Bytes())-off[0])
		}
		for c := range x.chunkOff {
			if err := x.checkChunk(c); err != nil {
				m.Close()
				return nil, err
			}
		}
		x.pages.ReleaseAll() // a paged mapping reads them again by chunk
	}
	return x, nil
}

// decodeFor decodes the mapped index file m for the data file f and cfg.
func decodeFor(m *mapped.File, f corpus.Blob, cfg *Config) (*index, error) {
	k, err := keyOf(f, cfg)
	if err != nil {
		return nil, err
	}
	// The header and per-chunk summary are read whole at once, where the
	// faults of a paged mapping (random access advised) would read them a
	// page at a time: hundreds of reads from the disk before the first
	// minibatch of a large corpus.
	end, err := summaryEnd(m.Bytes())
	if err != nil {
		return nil, err
	}
	m.Need(0, end)
	got, x, err := decodeIndex(m.Bytes())
	if err != nil {
		return nil, err
	}
	if got != k {
		return nil, fmt.Errorf("ctf: index cache is stale (the data file or the config changed)")
	}
	return x, nil
}

// checkAtOpen is the size of per-sequence tables up to which loadCache
// checks them all at open (a corpus of about a GB); larger ones are checked
// chunk by chunk as chunks are first read. Tests lower it.
var checkAtOpen int64 = 32 << 20

// writeCache writes a heap index atomically (temp file, fsync, rename).
func writeCache(f corpus.Blob, path string, cfg *Config, x *index) error {
	k, err := keyOf(f, cfg)
	if err != nil {
		return err
	}
	return atomicfile.Write(cachePath(path, cfg), encodeIndex(k, x), 0o644)
}

// encodeIndex encodes a heap index as an index file.
func encodeIndex(k cacheKey, x *index) []byte {
	b := encodeSummary(k, x)
	for _, t := range x.tables() {
		for _, v := range t {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		b = append(b, make([]byte, mapped.Pad(len(b)))...)
	}
	return b
}

// tables lists the per-sequence tables in file order.
func (x *index) tables() [][]uint32 {
	t := [][]uint32{x.rel, x.sizes, x.samples}
	if x.hasLabels {
		t = append(t, x.labels)
	}
	return t
}

// encodeSummary encodes the header and summary, padded to the tables.
func encodeSummary(k cacheKey, x *index) []byte {
	le := binary.LittleEndian
	b := le.AppendUint64(le.AppendUint32([]byte(cacheMagic), cacheVersion), 0) // length below
	for _, v := range []uint64{uint64(k.size), uint64(k.mtime), k.head, k.tail, k.conf} {
		b = le.AppendUint64(b, v)
	}
	b = append(b, b2u(x.lineMode), b2u(x.hasLabels))
	b = le.AppendUint64(b, uint64(x.n))
	b = le.AppendUint64(b, uint64(len(x.chunkStart)-1))
	b = le.AppendUint64(b, uint64(x.skippedLines))
	b = le.AppendUint64(b, uint64(x.lastLine))
	b = le.AppendUint64(b, uint64(x.lastCol))
	h, _ := strconv.ParseUint(x.layout().Hash(), 16, 64)
	b = le.AppendUint64(b, h)
	b = le.AppendUint32(b, uint32(len(x.dropped)))
	for _, d := range x.dropped {
		b = le.AppendUint64(b, uint64(d.Line))
		b = le.AppendUint64(b, uint64(d.Offset))
		b = le.AppendUint32(b, uint32(len(d.Msg)))
		b = append(b, d.Msg...)
	}
	b = le.AppendUint32(b, uint32(len(x.skipped)))
	for _, p := range x.skipped {
		b = le.AppendUint64(b, uint64(p.line))
		b = le.AppendUint64(b, uint64(p.off))
	}
	for c := range x.chunkOff {
		b = le.AppendUint64(b, uint64(x.chunkOff[c]))
		b = le.AppendUint64(b, uint64(x.chunkLine[c]))
		b = le.AppendUint64(b, uint64(x.chunkEnd[c]))
		b = le.AppendUint64(b, x.chunkSamples[c])
		b = le.AppendUint64(b, x.chunkLabels[c])
		b = le.AppendUint32(b, x.chunkCRC[c])
	}
	for _, v := range x.chunkStart {
		b = le.AppendUint64(b, uint64(v))
	}
	le.PutUint64(b[len(cacheMagic)+4:], uint64(len(b)+4-len(cacheMagic)-12))
	b = le.AppendUint32(b, crc32.ChecksumIEEE(b))
	return append(b, make([]byte, mapped.Pad(len(b)))...)
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

var errCorrupt = errors.New("ctf: index cache is corrupt")

// decoder reads little-endian values; any read past the end sets bad.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) u8() byte {
	if len(d.b) < 1 {
		d.bad = true
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) u32() uint32 {
	if len(d.b) < 4 {
		d.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) u64() uint64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// summaryEnd checks an index file's header and returns where its summary
// (header, per-chunk data and checksum) ends.
func summaryEnd(data []byte) (int, error) {
	head := len(cacheMagic) + 12
	if len(data) < head || !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return 0, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	if v := binary.LittleEndian.Uint32(data[len(cacheMagic):]); v != cacheVersion {
		return 0, fmt.Errorf("%w: version %d, want %d", errCorrupt, v, cacheVersion)
	}
	sl := binary.LittleEndian.Uint64(data[len(cacheMagic)+4:])
	if sl < 4 || sl > uint64(len(data)-head) {
		return 0, fmt.Errorf("%w: bad length", errCorrupt)
	}
	return head + int(sl), nil
}

// decodeIndex parses an index file and checks its summary; the tables are
// views of data (see u32s), each chunk's checked by checkChunk when first
// used.
func decodeIndex(data []byte) (cacheKey, *index, error) {
	var k cacheKey
	end, err := summaryEnd(data)
	if err != nil {
		return k, nil, err
	}
	head := len(cacheMagic) + 12
	body, sum := data[:end-4], binary.LittleEndian.Uint32(data[end-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return k, nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	d := &decoder{b: body[head:]}
	k = cacheKey{int64(d.u64()), int64(d.u64()), d.u64(), d.u64(), d.u64()}
	x := &index{}
	lm, hl := d.u8(), d.u8()
	if lm > 1 || hl > 1 {
		return k, nil, fmt.Errorf("%w: bad flags", errCorrupt)
	}
	x.lineMode, x.hasLabels = lm == 1, hl == 1
	n, nc := d.u64(), d.u64()
	tables := uint64(3 + hl)
	colBase := uint64(end + mapped.Pad(end))
	tableLen := (4*n + mapped.PageSize - 1) / mapped.PageSize * mapped.PageSize
	if d.bad || n > uint64(len(data))/4 || nc > n || (n > 0) != (nc > 0) || nc > uint64(len(d.b))/44 ||
		colBase+tables*tableLen != uint64(len(data)) {
		return k, nil, fmt.Errorf("%w: bad counts", errCorrupt)
	}
	x.skippedLines = int64(d.u64())
	x.lastLine, x.lastCol = int64(d.u64()), int64(d.u64())
	x.hash = strconv.FormatUint(d.u64(), 16)
	nd := d.u32()
	if uint64(nd) > uint64(len(d.b))/20 {
		return k, nil, fmt.Errorf("%w: bad counts", errCorrupt)
	}
	for i := uint32(0); i < nd && !d.bad; i++ {
		e := Error{Line: int64(d.u64()), Col: 1, Offset: int64(d.u64()), Err: ErrNoMBSizeStream}
		m := d.u32()
		if uint64(m) > uint64(len(d.b)) {
			return k, nil, fmt.Errorf("%w: bad message", errCorrupt)
		}
		e.Msg = string(d.b[:m])
		d.b = d.b[m:]
		x.dropped = append(x.dropped, e)
	}
	ns := d.u32()
	if x.skippedLines < 0 || int64(ns) != min(x.skippedLines, maxSkippedNamed) {
		return k, nil, fmt.Errorf("%w: bad counts", errCorrupt)
	}
	for i := uint32(0); i < ns; i++ {
		p := position{int64(d.u64()), int64(d.u64())}
		if p.line < 0 || p.off < 0 || p.off >= k.size {
			return k, nil, fmt.Errorf("%w: bad skipped line", errCorrupt)
		}
		x.skipped = append(x.skipped, p)
	}
	if nc > uint64(len(d.b))/44 {
		return k, nil, fmt.Errorf("%w: bad counts", errCorrupt)
	}
	x.chunkOff, x.chunkLine, x.chunkEnd = make([]int64, nc), make([]int64, nc), make([]int64, nc)
	x.chunkSamples, x.chunkLabels, x.chunkCRC = make([]uint64, nc), make([]uint64, nc), make([]uint32, nc)
	for c := range x.chunkOff {
		x.chunkOff[c], x.chunkLine[c], x.chunkEnd[c] = int64(d.u64()), int64(d.u64()), int64(d.u64())
		x.chunkSamples[c], x.chunkLabels[c], x.chunkCRC[c] = d.u64(), d.u64(), d.u32()
	}
	x.chunkStart = make([]int, nc+1)
	for i := range x.chunkStart {
		x.chunkStart[i] = int(d.u64())
	}
	if d.bad || len(d.b) != 0 {
		return k, nil, fmt.Errorf("%w: bad length", errCorrupt)
	}
	if !zeros(data[end:colBase]) {
		return k, nil, fmt.Errorf("%w: bad padding", errCorrupt)
	}
	x.n = int(n)
	t := make([][]uint32, 4)
	var offs []int
	for i := range tables {
		off := colBase + i*tableLen
		if !zeros(data[off+4*n : off+tableLen]) {
			return k, nil, fmt.Errorf("%w: bad padding", errCorrupt)
		}
		t[i] = mapped.U32s(data[off:off+tableLen], int(n))
		offs = append(offs, int(off))
	}
	x.rel, x.sizes, x.samples, x.labels = t[0], t[1], t[2], t[3]
	if x.hasLabels && x.labels == nil {
		x.labels = []uint32{}
	}
	if !x.hasLabels {
		x.labels = nil
	}
	x.size = k.size
	if err := x.checkSummary(); err != nil {
		return k, nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	x.checked = make([]atomic.Bool, nc)
	x.pages = &mapped.Tables{Off: offs, ChunkStart: x.chunkStart} // File: set by who mapped data
	return k, x, nil
}

// checkSummary verifies, in O(chunks), that the chunk table describes
// non-empty chunks, in file order, inside the file, whose sums are
// possible: every sequence has at least one sample.
func (x *index) checkSummary() error {
	l := x.layout()
	if err := l.Validate(); err != nil {
		return err
	}
	if l.ChunkStart[len(l.ChunkStart)-1] != x.n {
		return fmt.Errorf("chunk table ends at %d of %d sequences", l.ChunkStart[len(l.ChunkStart)-1], x.n)
	}
	var end, line int64
	for c := range x.chunkOff {
		if x.chunkLine[c] < line || x.chunkOff[c] < end || x.chunkEnd[c] <= x.chunkOff[c] || x.chunkEnd[c] > x.size ||
			x.chunkEnd[c]-x.chunkOff[c] > 2*math.MaxUint32 {
			return fmt.Errorf("chunk %d: bad extent", c)
		}
		if !x.hasLabels && x.chunkLabels[c] != x.chunkSamples[c] {
			return fmt.Errorf("chunk %d: bad label sum", c)
		}
		line, end = x.chunkLine[c], x.chunkEnd[c]
	}
	return nil
}

// checkChunk verifies chunk c's per-sequence tables, once: their checksum,
// and that its sequences lie in order inside the chunk's extent, each with
// samples, adding up to the chunk's sums. A heap index (built by this
// process) needs no check.
func (x *index) checkChunk(c int) error {
	if x.checked == nil || x.checked[c].Load() {
		return nil
	}
	if err := x.verifyChunk(c); err != nil {
		return err
	}
	x.checked[c].Store(true)
	return nil
}

// verifyChunk does checkChunk's checks.
func (x *index) verifyChunk(c int) error {
	first, last := x.chunkStart[c], x.chunkStart[c+1]
	var labels []uint32
	if x.hasLabels {
		labels = x.labels[first:last]
	}
	if tablesCRC(x.rel[first:last], x.sizes[first:last], x.samples[first:last], labels, x.hasLabels) != x.chunkCRC[c] {
		return fmt.Errorf("%w: chunk %d: checksum mismatch", errCorrupt, c)
	}
	var end, s, l uint64
	for i := first; i < last; i++ {
		if uint64(x.rel[i]) < end || x.sizes[i] == 0 || x.samples[i] == 0 || i == first && x.rel[i] != 0 {
			return fmt.Errorf("%w: chunk %d: sequence %d: bad extent", errCorrupt, c, i)
		}
		end = uint64(x.rel[i]) + uint64(x.sizes[i])
		s += uint64(x.samples[i])
		if x.hasLabels {
			l += uint64(x.labels[i])
		}
	}
	if !x.hasLabels {
		l = s
	}
	if int64(end) != x.chunkEnd[c]-x.chunkOff[c] || s != x.chunkSamples[c] || l != x.chunkLabels[c] {
		return fmt.Errorf("%w: chunk %d: tables disagree with the summary", errCorrupt, c)
	}
	return nil
}

// check verifies the whole index, summary and every chunk, against a file
// of the given size.
func (x *index) check(size int64) error {
	if x.size != size {
		return fmt.Errorf("index of %d bytes for a file of %d", x.size, size)
	}
	if err := x.checkSummary(); err != nil {
		return err
	}
	for c := range x.chunkOff {
		if err := x.verifyChunk(c); err != nil {
			return err
		}
	}
	return nil
}

func zeros(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}
