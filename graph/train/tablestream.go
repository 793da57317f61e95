package train

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/graph/train/model"
	"github.com/batchprep/batchprep/internal/atomicfile"
)

// Table files are written and read in pieces of streamBytes: a partition
// never exists twice in memory (as floats and as the file's bytes), which
// would double the memory of the largest partitions at every save and load
// (docs/training.md, "Memory").
const streamBytes = 1 << 16

// writeTableRef writes tab as table file name in dir, atomically, and
// describes it: the same bytes as encodeTable, hashed as they are written.
func writeTableRef(dir, name string, tab *model.Table) (FileRef, error) {
	path := filepath.Join(dir, name)
	h := sha256.New()
	var n int64
	err := atomicfile.WriteFrom(path, 0o644, func(f io.Writer) error {
		w := bufio.NewWriterSize(io.MultiWriter(f, h), streamBytes)
		head := make([]byte, 24)
		copy(head, tableMagic)
		binary.LittleEndian.PutUint64(head[8:], uint64(tab.Rows))
		binary.LittleEndian.PutUint32(head[16:], uint32(tab.Dim))
		w.Write(head)
		buf := make([]byte, 0, streamBytes)
		for _, v := range [][]float32{tab.Emb, tab.Acc} {
			for len(v) > 0 {
				k := min(len(v), streamBytes/4)
				buf = appendFloats(buf[:0], v[:k])
				if _, err := w.Write(buf); err != nil {
					return err
				}
				v = v[k:]
			}
		}
		n = 24 + 4*int64(len(tab.Emb)+len(tab.Acc))
		return w.Flush()
	})
	if err != nil {
		return FileRef{}, fmt.Errorf("train: writing checkpoint file %s: %w", path, err)
	}
	return FileRef{File: name, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

// readTableRef reads the table file ref names in dir, checking its size
// and digest as readRef does and its content as decodeTable does, with the
// same errors; the file's bytes are decoded as they are read.
func readTableRef(dir string, ref FileRef) (*model.Table, error) {
	return readTableRefTo(dir, ref, model.MakeTable)
}

// readTableRefTo is readTableRef into a table from alloc (the trainer's
// are mapped, model.MapTable); a table read in part is released.
func readTableRefTo(dir string, ref FileRef, alloc func(rows, dim int) *model.Table) (*model.Table, error) {
	path := filepath.Join(dir, ref.File)
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		var st os.FileInfo
		if st, err = f.Stat(); err == nil && st.Size() != ref.Bytes {
			return nil, fmt.Errorf("%w: %s: %d bytes, the manifest says %d", ErrCheckpoint, path, st.Size(), ref.Bytes)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s names %s: %v", ErrCheckpoint, filepath.Join(dir, ManifestName), ref.File, err)
	}
	h := sha256.New()
	r := io.TeeReader(bufio.NewReaderSize(f, streamBytes), h)
	tab, bad := readTable(r, ref.Bytes, alloc)
	ok := false
	defer func() {
		if !ok {
			tab.Release() // nil when readTable refused it
		}
	}()
	if bad != nil && errors.Is(bad, errTableIO) {
		return nil, fmt.Errorf("%w: %s names %s: %v", ErrCheckpoint, filepath.Join(dir, ManifestName), ref.File, bad)
	}
	// The digest decides first, as with readRef: a file whose header does
	// not decode is read to its end to tell damage from a foreign file.
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, fmt.Errorf("%w: %s names %s: %v", ErrCheckpoint, filepath.Join(dir, ManifestName), ref.File, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != ref.SHA256 {
		return nil, fmt.Errorf("%w: %s: SHA-256 differs from the manifest's (damaged, or another version of the file)", ErrCheckpoint, path)
	}
	if bad != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCheckpoint, ref.File, bad)
	}
	ok = true
	return tab, nil
}

// errTableIO marks a read error (as opposed to content decodeTable would
// refuse) in readTable.
var errTableIO = errors.New("read error")

// readTable decodes a table file of size bytes from r, refusing what
// decodeTable refuses with the same messages.
func readTable(r io.Reader, size int64, alloc func(rows, dim int) *model.Table) (_ *model.Table, err error) {
	head := make([]byte, 24)
	n, err := io.ReadFull(r, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", errTableIO, err)
	}
	if n < 24 {
		// Short files: decodeTable words the refusal.
		_, err := decodeTable(head[:n])
		return nil, err
	}
	if _, err := decodeTable(head); err != nil && (string(head[:8]) != tableMagic || binary.LittleEndian.Uint32(head[20:]) != 0) {
		return nil, err
	}
	rows, dim := binary.LittleEndian.Uint64(head[8:]), uint64(binary.LittleEndian.Uint32(head[16:]))
	if dim == 0 || rows > uint64(size-24)/(4*(dim+1)) || uint64(size-24) != 4*rows*(dim+1) {
		return nil, fmt.Errorf("table file: %d bytes do not hold %d rows of dimension %d", size, rows, dim)
	}
	t := alloc(int(rows), int(dim))
	defer func() {
		if err != nil {
			t.Release()
		}
	}()
	buf := make([]byte, streamBytes)
	for _, v := range [][]float32{t.Emb, t.Acc} {
		for len(v) > 0 {
			k := min(len(v), streamBytes/4)
			if _, err := io.ReadFull(r, buf[:4*k]); err != nil {
				return nil, fmt.Errorf("%w: %v", errTableIO, err)
			}
			for i := range k {
				v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
			v = v[k:]
		}
	}
	return t, nil
}
