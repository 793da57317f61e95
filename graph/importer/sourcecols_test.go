package importer

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/batchprep/batchprep/graph/edgestore"
)

// A text file's edge set records the columns and delimiter it was read
// with (eval reads more edges the same way); a Parquet file's does not.
func TestImportRecordsSourceColumns(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 2, 2)
	tsv := filepath.Join(dir, "in.tsv")
	ref := genKG(t, tsv, 300, 5, false)
	rows := make([]pqEdge, len(ref))
	for i, e := range ref {
		rows[i] = pqEdge{e.lhs, e.rel, e.rhs, e.weight}
	}
	pq := filepath.Join(dir, "in.parquet")
	writePQ(t, pq, rows, 100)
	o := kgOptions()
	if _, err := Import(context.Background(), c, o, []string{tsv, pq}); err != nil {
		t.Fatal(err)
	}
	s, err := edgestore.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := &edgestore.SourceColumns{Lhs: 0, Rel: 1, Rhs: 2, Delimiter: "tab"}
	if got := s.SourceColumns(0); !reflect.DeepEqual(got, want) {
		t.Errorf("text edge set records %+v, want %+v", got, want)
	}
	if got := s.SourceColumns(1); got != nil {
		t.Errorf("Parquet edge set records %+v, want none", got)
	}
}
