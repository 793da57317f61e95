package parquet

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestDamagedPageHeader: a page header declaring more uncompressed bytes
// than its whole column chunk is reported as damaged before the library
// allocates what it declares.
func TestDamagedPageHeader(t *testing.T) {
	// 20 doubles: a page of more than 63 bytes (a two-byte size in the
	// header) in a chunk of fewer than 8191.
	x := make([]any, 20)
	for i := range x {
		x[i] = float64(i)
	}
	data, err := os.ReadFile(writeFile(t, pq.Group{"x": list(f64)}, []map[string]any{{"x": x}}, 0))
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	m := pf.Metadata().RowGroups[0].Columns[0].MetaData
	off := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < off {
		off = m.DictionaryPageOffset
	}
	oversize(t, data, off, m.TotalUncompressedSize)
	p := filepath.Join(t.TempDir(), "damaged.parquet")
	os.WriteFile(p, data, 0o644)
	_, err = Open(p, Config{Streams: []corpus.Stream{{Name: "x", Dim: 20}}})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "page header does not fit its column chunk") {
		t.Fatalf("error %v, want the damaged page header reported", err)
	}
}

// oversize rewrites the page header at off in data to declare an
// uncompressed size above total (its column chunk's), in as many bytes as
// before, so that the file's offsets stay right.
func oversize(t *testing.T, data []byte, off, total int64) {
	t.Helper()
	var proto thrift.CompactProtocol
	rd := bytes.NewReader(data[off:])
	var h format.PageHeader
	if err := thrift.NewDecoder(proto.NewReader(rd)).Decode(&h); err != nil {
		t.Fatal(err)
	}
	n := len(data[off:]) - rd.Len()
	for _, v := range []int32{63, 8191, 1<<20 - 1, 1<<27 - 1} {
		if int64(v) <= total {
			continue
		}
		h.UncompressedPageSize = v
		if patched, err := thrift.Marshal(&proto, &h); err == nil && len(patched) == n {
			copy(data[off:], patched)
			return
		}
	}
	t.Fatal("no same-length header found")
}

// TestDamagedFooterLength: a file whose footer length claims more than
// the file holds, or that lacks the closing magic or the frame, is
// refused by name before the library allocates the length it claims
// (fuzzing found a 19-byte file claiming 3.3 GB: 0.75 s of zeroing a
// buffer, a hung fuzz worker). Open says damaged; InferBlob, which does
// not know the file is Parquet, says not Parquet.
func TestDamagedFooterLength(t *testing.T) {
	claims := []byte("PAR1\x15\x06\x154\x15F\x15\xf5\x8e\x85\xc6PAR1")
	for _, c := range []struct {
		name, data, want string
	}{
		{"claims 3.3 GB", string(claims), "its footer claims 3330641653 bytes of a 19-byte file"},
		{"no closing magic", "PAR1" + strings.Repeat("\x00", 12) + "PAR", "no PAR1 magic at its start and end"},
		{"shorter than the frame", "PAR1PAR1", "8 bytes, shorter than the format's frame"},
	} {
		blob := memBlob{bytes.NewReader([]byte(c.data))}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := OpenFile(context.Background(), blob, "f.parquet", Config{Streams: fuzzStreams})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Open: %v, want damaged, %q", c.name, err, c.want)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s: Open allocated %d bytes", c.name, n)
		}
		if _, err := InferBlob(blob, "f.parquet"); !errors.Is(err, ErrNotParquet) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: InferBlob: %v, want not Parquet, %q", c.name, err, c.want)
		}
	}
}
