package ctf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/internal/atomicfile"
)

// The index cache file, little-endian:
//
//	magic "BPCTFIDX", version u32,
//	key: file size i64, mtime ns i64, FNV-64a of the first and of the last
//	     64 KiB u64 u64, FNV-64a of the indexing config u64,
//	lineMode u8, hasLabels u8, sequences u64, chunks u64,
//	skippedLines i64, lastLine i64, lastCol i64,
//	dropped u32, each {line i64, offset i64, msg len u32, msg},
//	skipped u32, each {line i64, offset i64},
//	chunkOff [chunks]i64, chunkLine [chunks]i64, rel [n]u32, sizes [n]u32,
//	samples [n]u32, labels [n]u32 (when hasLabels), chunkStart [chunks+1]u64,
//	CRC-32 (IEEE) of all the preceding bytes u32.
const (
	cacheMagic   = "BPCTFIDX"
	cacheVersion = 2
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

func keyOf(f *os.File, cfg *Config) (cacheKey, error) {
	st, err := f.Stat()
	if err != nil {
		return cacheKey{}, err
	}
	k := cacheKey{size: st.Size(), mtime: st.ModTime().UnixNano(), conf: configHash(cfg)}
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
// os.IsNotExist is true.
func loadCache(f *os.File, path string, cfg *Config) (*index, error) {
	data, err := os.ReadFile(cachePath(path, cfg))
	if err != nil {
		return nil, err
	}
	k, err := keyOf(f, cfg)
	if err != nil {
		return nil, err
	}
	got, x, err := decodeIndex(data)
	if err != nil {
		return nil, err
	}
	if got != k {
		return nil, fmt.Errorf("ctf: index cache is stale (the data file or the config changed)")
	}
	for i := range x.dropped {
		x.dropped[i].File = path
	}
	return x, nil
}

// writeCache writes the index atomically (temp file, fsync, rename).
func writeCache(f *os.File, path string, cfg *Config, x *index) error {
	k, err := keyOf(f, cfg)
	if err != nil {
		return err
	}
	return atomicfile.Write(cachePath(path, cfg), encodeIndex(k, x), 0o644)
}

func encodeIndex(k cacheKey, x *index) []byte {
	b := []byte(cacheMagic)
	le := binary.LittleEndian
	b = le.AppendUint32(b, cacheVersion)
	for _, v := range []uint64{uint64(k.size), uint64(k.mtime), k.head, k.tail, k.conf} {
		b = le.AppendUint64(b, v)
	}
	b = append(b, b2u(x.lineMode), b2u(x.labels != nil))
	b = le.AppendUint64(b, uint64(len(x.samples)))
	b = le.AppendUint64(b, uint64(len(x.chunkStart)-1))
	b = le.AppendUint64(b, uint64(x.skippedLines))
	b = le.AppendUint64(b, uint64(x.lastLine))
	b = le.AppendUint64(b, uint64(x.lastCol))
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
	for _, v := range x.chunkOff {
		b = le.AppendUint64(b, uint64(v))
	}
	for _, v := range x.chunkLine {
		b = le.AppendUint64(b, uint64(v))
	}
	for _, v := range x.rel {
		b = le.AppendUint32(b, v)
	}
	for _, v := range x.sizes {
		b = le.AppendUint32(b, v)
	}
	for _, v := range x.samples {
		b = le.AppendUint32(b, v)
	}
	for _, v := range x.labels {
		b = le.AppendUint32(b, v)
	}
	for _, v := range x.chunkStart {
		b = le.AppendUint64(b, uint64(v))
	}
	return le.AppendUint32(b, crc32.ChecksumIEEE(b))
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

// decodeIndex parses a cache file and checks its internal consistency.
func decodeIndex(data []byte) (cacheKey, *index, error) {
	var k cacheKey
	if len(data) < len(cacheMagic)+8 || !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return k, nil, fmt.Errorf("%w: bad magic", errCorrupt)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return k, nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	d := &decoder{b: body[len(cacheMagic):]}
	if v := d.u32(); v != cacheVersion {
		return k, nil, fmt.Errorf("%w: version %d, want %d", errCorrupt, v, cacheVersion)
	}
	k = cacheKey{int64(d.u64()), int64(d.u64()), d.u64(), d.u64(), d.u64()}
	x := &index{}
	lm, hl := d.u8(), d.u8()
	if lm > 1 || hl > 1 {
		return k, nil, fmt.Errorf("%w: bad flags", errCorrupt)
	}
	x.lineMode = lm == 1
	n, nc := d.u64(), d.u64()
	per := uint64(4 + 4 + 4 + 4*uint64(hl))
	if d.bad || n > uint64(len(d.b))/per || nc > n || (n > 0) != (nc > 0) || nc > uint64(len(d.b))/24 {
		return k, nil, fmt.Errorf("%w: bad counts", errCorrupt)
	}
	x.skippedLines = int64(d.u64())
	x.lastLine, x.lastCol = int64(d.u64()), int64(d.u64())
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
	x.chunkOff = make([]int64, nc)
	x.chunkLine = make([]int64, nc)
	x.rel = make([]uint32, n)
	x.sizes = make([]uint32, n)
	x.samples = make([]uint32, n)
	for i := range x.chunkOff {
		x.chunkOff[i] = int64(d.u64())
	}
	for i := range x.chunkLine {
		x.chunkLine[i] = int64(d.u64())
	}
	for i := range x.rel {
		x.rel[i] = d.u32()
	}
	for i := range x.sizes {
		x.sizes[i] = d.u32()
	}
	for i := range x.samples {
		x.samples[i] = d.u32()
	}
	if hl == 1 {
		x.labels = make([]uint32, n)
		for i := range x.labels {
			x.labels[i] = d.u32()
		}
	}
	if nc+1 > uint64(len(d.b))/8+1 {
		return k, nil, fmt.Errorf("%w: bad counts", errCorrupt)
	}
	x.chunkStart = make([]int, nc+1)
	for i := range x.chunkStart {
		x.chunkStart[i] = int(d.u64())
	}
	if d.bad || len(d.b) != 0 {
		return k, nil, fmt.Errorf("%w: bad length", errCorrupt)
	}
	if err := x.check(k.size); err != nil {
		return k, nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	x.size = k.size
	return k, x, nil
}

// check verifies that x describes a valid layout of non-overlapping
// sequences, in file order, inside a file of the given size, each chunk
// starting at its first sequence.
func (x *index) check(size int64) error {
	if err := x.layout().Validate(); err != nil {
		return err
	}
	nc := len(x.chunkStart) - 1
	if len(x.chunkOff) != nc || len(x.chunkLine) != nc || len(x.rel) != len(x.samples) || len(x.sizes) != len(x.samples) {
		return fmt.Errorf("table lengths differ")
	}
	var end, line int64
	for c := 0; c < nc; c++ {
		if x.chunkLine[c] < line || x.chunkOff[c] < end {
			return fmt.Errorf("chunk %d: bad start", c)
		}
		line = x.chunkLine[c]
		for i := x.chunkStart[c]; i < x.chunkStart[c+1]; i++ {
			off := x.chunkOff[c] + int64(x.rel[i])
			if off < end || x.sizes[i] == 0 || off+int64(x.sizes[i]) > size || i == x.chunkStart[c] && x.rel[i] != 0 {
				return fmt.Errorf("sequence %d: bad extent", i)
			}
			end = off + int64(x.sizes[i])
		}
	}
	return nil
}
