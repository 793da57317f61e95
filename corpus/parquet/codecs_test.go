package parquet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/pqtest"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// withCodec writes the Parquet file at p with every column chunk claiming
// codec c (pqtest.WithCodec) into a new file.
func withCodec(t *testing.T, p string, c format.CompressionCodec) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pqtest.WithCodec(data, c)
	if err != nil {
		t.Fatal(err)
	}
	q := filepath.Join(t.TempDir(), c.String()+".parquet")
	if err := os.WriteFile(q, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestUnreadableCodec: a column compressed with LZO or the Hadoop-framed
// LZ4 (codecs with no decoder here) is refused by Open and by Infer with
// the codec and the column named, not reported as a damaged page.
func TestUnreadableCodec(t *testing.T) {
	// Snappy pages under another codec's name: compressed pages, as an
	// LZO file's are, that no decoder here can read.
	p := filepath.Join(t.TempDir(), "snappy.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[map[string]any](f, pq.NewSchema("t", pq.Group{"x": list(f64)}), pq.Compression(&pq.Snappy), pq.DataPageVersion(1))
	if _, err := w.Write([]map[string]any{{"x": []any{1.0, 2.0}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []format.CompressionCodec{format.LZO, format.Lz4} {
		q := withCodec(t, p, c)
		_, err := Open(q, Config{Streams: []corpus.Stream{{Name: "x", Dim: 2}}})
		want := `row group 0, row 0, column "x": compressed with ` + c.String() + ", which batchprep cannot decode"
		if !errors.Is(err, ErrCodec) || !strings.Contains(err.Error(), want) {
			t.Errorf("Open %s: %v, want %q", c, err, want)
		}
		if _, err := Infer(q); !errors.Is(err, ErrCodec) || !strings.Contains(err.Error(), want) {
			t.Errorf("Infer %s: %v, want %q", c, err, want)
		}
	}
	if _, err := Open(withCodec(t, p, format.Snappy), Config{Streams: []corpus.Stream{{Name: "x", Dim: 2}}}); err != nil {
		t.Errorf("the footer rewritten as it was: %v", err)
	}
}
