// Package pqcompare measures how fast two pure-Go Parquet libraries read an
// edge list's columns, to choose the one the importer uses. Run:
//
//	go test -run '^$' -bench . -benchtime 5x ./bench/pqcompare/
package pqcompare

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	arrowpq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/parquet-go/parquet-go"
)

const (
	edges    = 2_000_000
	rowGroup = 256 * 1024
	entities = 200_000
)

type intEdge struct {
	Src int64 `parquet:"src"`
	Rel int64 `parquet:"rel"`
	Dst int64 `parquet:"dst"`
}

type strEdge struct {
	Src string `parquet:"src,dict"`
	Rel string `parquet:"rel,dict"`
	Dst string `parquet:"dst,dict"`
}

func writeFile(b *testing.B, dir string, strs bool) (string, int64) {
	p := filepath.Join(dir, fmt.Sprintf("e%v.parquet", strs))
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	x := uint64(1)
	next := func() int64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return int64(x % entities) }
	if strs {
		w := parquet.NewGenericWriter[strEdge](f, parquet.MaxRowsPerRowGroup(rowGroup))
		buf := make([]strEdge, 0, 4096)
		for i := range edges {
			buf = append(buf, strEdge{"e" + strconv.FormatInt(next(), 10), "r" + strconv.Itoa(i%4), "e" + strconv.FormatInt(next(), 10)})
			if len(buf) == cap(buf) || i == edges-1 {
				if _, err := w.Write(buf); err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	} else {
		w := parquet.NewGenericWriter[intEdge](f, parquet.MaxRowsPerRowGroup(rowGroup))
		buf := make([]intEdge, 0, 4096)
		for i := range edges {
			buf = append(buf, intEdge{next(), int64(i % 4), next()})
			if len(buf) == cap(buf) || i == edges-1 {
				if _, err := w.Write(buf); err != nil {
					b.Fatal(err)
				}
				buf = buf[:0]
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	fi, _ := f.Stat()
	f.Close()
	return p, fi.Size()
}

// readParquetGo reads every column chunk page by page through Data(), the
// library's fastest path, and sums the values (or their lengths).
func readParquetGo(b *testing.B, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size(), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		b.Fatal(err)
	}
	var sum int64
	for _, rg := range pf.RowGroups() {
		for _, cc := range rg.ColumnChunks() {
			pages := cc.Pages()
			for {
				pg, err := pages.ReadPage()
				if err != nil {
					break
				}
				d := pg.Data()
				if dict := pg.Dictionary(); dict != nil {
					dd := dict.Page().Data()
					_, offs := dd.ByteArray()
					for _, ix := range d.Int32() {
						sum += int64(offs[ix+1] - offs[ix])
					}
				} else if pg.Type().Kind() == parquet.Int64 {
					for _, v := range d.Int64() {
						sum += v
					}
				} else {
					_, offs := d.ByteArray()
					sum += int64(offs[len(offs)-1])
				}
				parquet.Release(pg)
			}
			pages.Close()
		}
	}
	return sum
}

// readArrow reads every column chunk with the typed column readers.
func readArrow(b *testing.B, path string) int64 {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var sum int64
	ints := make([]int64, 8192)
	bas := make([]arrowpq.ByteArray, 8192)
	for g := 0; g < r.NumRowGroups(); g++ {
		rg := r.RowGroup(g)
		for c := 0; c < rg.NumColumns(); c++ {
			cr, err := rg.Column(c)
			if err != nil {
				b.Fatal(err)
			}
			switch cr := cr.(type) {
			case *file.Int64ColumnChunkReader:
				for cr.HasNext() {
					_, n, err := cr.ReadBatch(int64(len(ints)), ints, nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					for _, v := range ints[:n] {
						sum += v
					}
				}
			case *file.ByteArrayColumnChunkReader:
				for cr.HasNext() {
					_, n, err := cr.ReadBatch(int64(len(bas)), bas, nil, nil)
					if err != nil {
						b.Fatal(err)
					}
					for _, v := range bas[:n] {
						sum += int64(len(v))
					}
				}
			default:
				b.Fatalf("column %d: %T", c, cr)
			}
		}
	}
	return sum
}

// BenchmarkReadEdges reads 2 M edges (3 columns, 8 row groups) of int64 or
// dictionary-encoded string ids with each library; both must agree.
func BenchmarkReadEdges(b *testing.B) {
	dir := b.TempDir()
	for _, strs := range []bool{false, true} {
		kind := "int64"
		if strs {
			kind = "string"
		}
		var path string
		var size int64
		var want int64
		for _, lib := range []string{"parquet-go", "arrow-go"} {
			b.Run(fmt.Sprintf("ids=%s/lib=%s", kind, lib), func(b *testing.B) {
				if path == "" {
					path, size = writeFile(b, dir, strs)
					want = readParquetGo(b, path)
				}
				b.SetBytes(size)
				for b.Loop() {
					var got int64
					if lib == "parquet-go" {
						got = readParquetGo(b, path)
					} else {
						got = readArrow(b, path)
					}
					if got != want {
						b.Fatalf("checksum %d, want %d", got, want)
					}
				}
				b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			})
		}
	}
}
