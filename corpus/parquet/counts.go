package parquet

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/atomicfile"
	"github.com/batchprep/batchprep/internal/mapped"
)

// The counts file keeps what an index pass learns of a Parquet file (each
// row's sample and label counts, the chunks, the totals), so that a later
// open reads the footer and no rows: a rank that loads only its own chunks
// then fetches only their pages (invariant 6). Little-endian:
//
//	magic "BPPQCNTS", version u32, key [32]byte (countsKey), the hash of
//	the file's edges for its fingerprint [32]byte (hex),
//	rows u64, chunks u64, labels u8, largest sequence's bytes i64,
//	streams u32, each stream's sample total i64,
//	per chunk: its row count, each row's sample count and, with labels,
//	each row's label count, all uvarints;
//	CRC-32 (IEEE) of all the preceding bytes u32.
const (
	countsMagic   = "BPPQCNTS"
	countsVersion = 1
)

// CountsSuffix is what the counts file's name adds to the base name of its
// file (an object's URL): the same as a CTF index's, since a published
// index of either format sits beside its object under the same name.
const CountsSuffix = ".batchprep-index"

// errCountsMismatch: the counts file is sound but for another version of
// the file or another config.
var errCountsMismatch = errors.New("made for another version of the file or other reader settings")

// CountsFile returns the counts file this Reader's open used or wrote ("":
// none kept, Config.CacheDir unset).
func (r *Reader) CountsFile() string { return CountsPath(r.path, r.cfg) }

// FromCounts reports whether the open found the counts in the counts file
// and read no rows.
func (r *Reader) FromCounts() bool { return r.fromCounts }

// CountsPath returns where the counts of the Parquet file at path are kept
// under cfg.CacheDir ("" without one).
func CountsPath(path string, cfg Config) string {
	if cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(cfg.CacheDir, filepath.Base(path)+CountsSuffix)
}

// countsKey names the file's content (its size, its version: an object's
// ETag or a file's modification time, and for a file the hash of its edges
// the fingerprint reads) and the config fields that shape the layout.
func (r *Reader) countsKey(version, edges string) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%q\x00%s\x00mb=%q;label=%q;cb=%d;cs=%d", r.fileSize, version, edges,
		r.cfg.DefinesMBSize, r.cfg.Label, r.cfg.chunkBytes(), r.cfg.ChunkSequences)
	for _, s := range r.cfg.Streams {
		fmt.Fprintf(h, ";%q:%d:%t", s.Name, s.Dim, s.Sparse)
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// setKey sets the counts' key, and returns the hash of the file's edges
// when it read them: a local file's modification time does not name its
// content, so its edges are part of the key, while an object's version (its
// ETag) does, and the fingerprint kept in the counts file spares it the
// edges' reads ("").
func (r *Reader) setKey() (edges string, err error) {
	version, versioned := r.version()
	if !versioned {
		if edges, err = r.edges(); err != nil {
			return "", err
		}
	}
	r.key = r.countsKey(version, edges)
	return edges, nil
}

// VerifyCounts checks the counts file of the Parquet file at path for cfg
// (with cfg.CacheDir) without using or rewriting it: nil when it decodes
// and was made for this version of the file and cfg; an error for which
// os.IsNotExist is true when there is none; otherwise an error naming it
// and what is wrong. (A reader never uses such a file: it says so and
// indexes the file.)
func VerifyCounts(path string, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	defer f.Close()
	r, err := openFooter(f, path, cfg)
	if err != nil {
		return err
	}
	if _, err := r.setKey(); err != nil {
		return err
	}
	if _, err := r.loadCounts(); err != nil {
		if os.IsNotExist(err) {
			return err
		}
		return fmt.Errorf("parquet: %s: %w", CountsPath(path, cfg), err)
	}
	r.counts.Close()
	return nil
}

// saveCounts writes the counts file (atomically), if cfg.CacheDir is set.
func (r *Reader) saveCounts() error {
	path := CountsPath(r.path, r.cfg)
	if path == "" {
		return nil
	}
	l := r.layout
	return atomicfile.WriteFrom(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		crc := crc32.NewIEEE()
		out := io.MultiWriter(bw, crc)
		var b []byte
		b = append(b, countsMagic...)
		b = binary.LittleEndian.AppendUint32(b, countsVersion)
		b = append(b, r.key[:]...)
		b = append(b, r.fp["file_edges_sha256"]...)
		b = binary.LittleEndian.AppendUint64(b, uint64(l.NumSequences()))
		b = binary.LittleEndian.AppendUint64(b, uint64(l.NumChunks()))
		b = append(b, boolByte(r.cfg.Label != ""))
		b = binary.LittleEndian.AppendUint64(b, uint64(r.maxSeqB))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.totals)))
		for _, t := range r.totals {
			b = binary.LittleEndian.AppendUint64(b, uint64(t))
		}
		for c := range l.NumChunks() {
			a, e := l.Chunk(c)
			b = binary.AppendUvarint(b, uint64(e-a))
			for _, s := range l.Samples[a:e] {
				b = binary.AppendUvarint(b, uint64(s))
			}
			if r.cfg.Label != "" {
				for _, s := range l.Labels[a:e] {
					b = binary.AppendUvarint(b, uint64(s))
				}
			}
			if len(b) >= 1<<16 {
				if _, err := out.Write(b); err != nil {
					return err
				}
				b = b[:0]
			}
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
		if _, err := bw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
			return err
		}
		return bw.Flush()
	})
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// loadCounts sets the layout, the totals and the largest sequence's size
// from the counts file, when it is there and made for this file and
// config, and returns the edges' hash it keeps. A missing file gives an
// error for which os.IsNotExist is true.
func (r *Reader) loadCounts() (string, error) {
	f, err := os.Open(CountsPath(r.path, r.cfg))
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	return r.decodeCounts(f, st.Size())
}

// decodeCounts reads a counts file of size bytes from rd and returns the
// edges' hash it keeps; on error the Reader is as it was.
func (r *Reader) decodeCounts(rd io.Reader, size int64) (string, error) {
	d := &countsDecoder{br: bufio.NewReaderSize(rd, 1<<16), crc: crc32.NewIEEE()}
	const at = 8 + 4 + 32 + edgesLen // the counts' header, after magic, version, key and edges
	var head [at + 8 + 8 + 1 + 8 + 4]byte
	if err := d.full(head[:]); err != nil {
		return "", err
	}
	d.crc.Write(head[:])
	le := binary.LittleEndian
	switch {
	case string(head[:8]) != countsMagic:
		return "", errors.New("not a Parquet counts file")
	case le.Uint32(head[8:]) != countsVersion:
		return "", fmt.Errorf("counts file version %d, want %d", le.Uint32(head[8:]), countsVersion)
	case [32]byte(head[12:44]) != r.key:
		return "", errCountsMismatch
	}
	edges := string(head[44:at])
	if _, err := hex.DecodeString(edges); err != nil {
		return "", errors.New("a damaged fingerprint")
	}
	rows, chunks := le.Uint64(head[at:]), le.Uint64(head[at+8:])
	labels := head[at+16] == 1
	maxSeqB := int64(le.Uint64(head[at+17:]))
	streams := le.Uint32(head[at+25:])
	n := r.first[len(r.first)-1]
	switch {
	case head[at+16] > 1 || labels != (r.cfg.Label != ""):
		return "", errors.New("the label flag does not match")
	case rows != uint64(n):
		return "", fmt.Errorf("%d rows, but the file has %d", rows, n)
	case chunks > rows || chunks == 0 && rows > 0:
		return "", fmt.Errorf("%d chunks for %d rows", chunks, rows)
	case int(streams) != len(r.cfg.Streams):
		return "", fmt.Errorf("%d streams, want %d", streams, len(r.cfg.Streams))
	case maxSeqB < 0:
		return "", errors.New("a negative sequence size")
	case int64(chunks) > size: // each takes at least a byte: no huge table from a short file
		return "", fmt.Errorf("%d chunks in %d bytes", chunks, size)
	}
	totals := make([]int64, streams)
	for s := range totals {
		var t [8]byte
		if err := d.full(t[:]); err != nil {
			return "", err
		}
		d.crc.Write(t[:])
		totals[s] = int64(le.Uint64(t[:]))
	}
	b := &layoutBuilder{r: r, l: &corpus.Layout{ChunkStart: []int{0}}, labels: labels}
	if r.fileSize >= spillAbove {
		sp, err := mapped.NewSpill(os.TempDir(), b.tables())
		if err != nil {
			return "", err
		}
		b.spill = sp
		defer sp.Remove()
	}
	var seen uint64
	for range chunks {
		k, err := d.uvarint(rows - seen)
		if err != nil {
			return "", err
		}
		if k == 0 {
			return "", errors.New("an empty chunk")
		}
		seen += k
		if b.samples, err = d.counts(b.samples[:0], k, 1); err != nil {
			return "", err
		}
		if labels {
			if b.labs, err = d.counts(b.labs[:0], k, 0); err != nil {
				return "", err
			}
		}
		b.closeChunk()
	}
	if seen != rows {
		return "", fmt.Errorf("the chunks hold %d rows, not %d", seen, rows)
	}
	want := d.crc.Sum32()
	var sum [4]byte
	if _, err := io.ReadFull(d.br, sum[:]); err != nil {
		return "", fmt.Errorf("the checksum is missing: %w", err)
	}
	if le.Uint32(sum[:]) != want {
		return "", errors.New("the checksum does not match: the file is damaged")
	}
	if _, err := d.br.ReadByte(); err != io.EOF {
		return "", errors.New("bytes after the checksum")
	}
	layout, counts := r.layout, r.counts
	err := b.finish()
	if err == nil {
		err = r.layout.Validate()
	}
	if err != nil {
		if r.counts != counts {
			r.counts.Close()
		}
		r.layout, r.counts = layout, counts
		return "", err
	}
	r.totals, r.maxSeqB = totals, maxSeqB
	return edges, nil
}

// countsDecoder reads a counts file; crc sums what it has read, so the sum
// is taken before the checksum's own bytes are read.
type countsDecoder struct {
	br  *bufio.Reader
	crc hash.Hash32
	one [1]byte
}

func (d *countsDecoder) ReadByte() (byte, error) {
	c, err := d.br.ReadByte()
	if err == nil {
		d.one[0] = c
		d.crc.Write(d.one[:])
	}
	return c, err
}

func (d *countsDecoder) full(p []byte) error {
	if _, err := io.ReadFull(d.br, p); err != nil {
		return fmt.Errorf("the file ends early: %w", err)
	}
	return nil
}

// uvarint reads a uvarint of at most limit.
func (d *countsDecoder) uvarint(limit uint64) (uint64, error) {
	v, err := binary.ReadUvarint(d)
	if err != nil {
		return 0, fmt.Errorf("a damaged count: %w", err)
	}
	if v > limit {
		return 0, fmt.Errorf("a count of %d, more than %s", v, strconv.FormatUint(limit, 10))
	}
	return v, nil
}

// counts appends k counts, each at least least, to dst.
func (d *countsDecoder) counts(dst []uint32, k uint64, least uint64) ([]uint32, error) {
	for range k {
		v, err := d.uvarint(1<<32 - 1)
		if err != nil {
			return dst, err
		}
		if v < least {
			return dst, errors.New("a row with no samples")
		}
		dst = append(dst, uint32(v))
	}
	return dst, nil
}
