package importer

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/edgestore"
)

func TestGenerateTSVDeterministic(t *testing.T) {
	var a, b, c bytes.Buffer
	GenerateTSV(&a, 1000, 3, 50, 1)
	GenerateTSV(&b, 1000, 3, 50, 1)
	GenerateTSV(&c, 1000, 3, 50, 2)
	if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("GenerateTSV is not a function of its arguments")
	}
	if n := bytes.Count(a.Bytes(), []byte{'\n'}); n != 1000 {
		t.Fatalf("%d lines", n)
	}
	if err := GenerateTSV(&a, 1, 0, 1, 1); err == nil {
		t.Fatal("zero relations accepted")
	}
}

func TestGenerateStore(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 2, 2)
	c.Relations = c.Relations[:2] // buys, follows: user and item entities
	rep, err := GenerateStore(context.Background(), c, t.TempDir(), 5000, 300, 9)
	if err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for s := 0; s < 2; s++ {
		total := 0
		for l := 0; l < 2; l++ {
			for r := 0; r < 2; r++ {
				n, err := st.NumEdges(s, graph.Bucket{Lhs: l, Rhs: r})
				if err != nil {
					t.Fatal(err)
				}
				total += n
			}
		}
		if total != 5000 || rep.EdgeSets[s].Edges != 5000 {
			t.Fatalf("edge set %d: %d edges", s, total)
		}
	}
	if filepath.Base(st.Source(1)) != "generated-1.tsv" {
		t.Errorf("source %s", st.Source(1))
	}
}
