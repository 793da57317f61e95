package importer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/gen"
)

type benchStrEdge struct {
	Src string `parquet:"src,dict"`
	Rel string `parquet:"rel,dict"`
	Dst string `parquet:"dst,dict"`
}

type benchIntEdge struct {
	Src int64 `parquet:"src"`
	Rel int64 `parquet:"rel"`
	Dst int64 `parquet:"dst"`
}

// benchRowGroup is the rows per row group of the benchmark files (10 row
// groups at the default size), snappy-compressed as Spark and DuckDB
// write by default.
const benchRowGroup = 1 << 20

// writeBenchParquet converts the generated TSV (e<l>\tr<rel>\te<r>) into
// Parquet with string ids (dictionary-encoded), or integer ids (the
// numbers without the "e" and "r"), and for integers also a TSV of the
// integers. It returns the paths.
func writeBenchParquet(b *testing.B, tsv, dir string) (strPQ, intPQ, intTSV string) {
	strPQ, intPQ, intTSV = filepath.Join(dir, "str.parquet"), filepath.Join(dir, "int.parquet"), filepath.Join(dir, "int.tsv")
	in, err := os.Open(tsv)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	fs, _ := os.Create(strPQ)
	fi, _ := os.Create(intPQ)
	ft, _ := os.Create(intTSV)
	opts := []parquet.WriterOption{parquet.MaxRowsPerRowGroup(benchRowGroup), parquet.Compression(&snappy.Codec{})}
	ws := parquet.NewGenericWriter[benchStrEdge](fs, opts...)
	wi := parquet.NewGenericWriter[benchIntEdge](fi, opts...)
	bt := bufio.NewWriterSize(ft, 1<<20)
	var rs []benchStrEdge
	var ri []benchIntEdge
	flush := func() {
		if _, err := ws.Write(rs); err != nil {
			b.Fatal(err)
		}
		if _, err := wi.Write(ri); err != nil {
			b.Fatal(err)
		}
		rs, ri = rs[:0], ri[:0]
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := bytes.Split(sc.Bytes(), []byte{'\t'})
		l, _ := strconv.ParseInt(string(f[0][1:]), 10, 64)
		r, _ := strconv.ParseInt(string(f[1][1:]), 10, 64)
		d, _ := strconv.ParseInt(string(f[2][1:]), 10, 64)
		rs = append(rs, benchStrEdge{string(f[0]), string(f[1]), string(f[2])})
		ri = append(ri, benchIntEdge{l, r, d})
		fmt.Fprintf(bt, "%d\t%d\t%d\n", l, r, d)
		if len(rs) == 1<<16 {
			flush()
		}
	}
	flush()
	for _, c := range []interface{ Close() error }{ws, wi, fs, fi} {
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if err := bt.Flush(); err != nil {
		b.Fatal(err)
	}
	ft.Close()
	return
}

// BenchmarkImportParquet imports the edges of BenchmarkImport (10 M edges,
// 4 relations, 1 M entities; BENCH_EDGES changes the count) as TSV and as
// Parquet, with string ids (e123, r1) and with integer ids (123, 1) in
// each format, into 4 partitions with fsync, as BenchmarkImport's
// import/P=4. Compare format=parquet/ids=X with format=tsv/ids=X.
// Reported: edges/s, edges per CPU-second, CPU nanoseconds per edge and
// MB/s of input.
//
// BENCH_GRAPH=powerlaw imports BenchmarkImportPowerLaw's graph instead (the
// same size, zipf 0.8, 4 relations): skewed like real graphs, so that a
// row group's dictionary holds far fewer values than it has rows.
func BenchmarkImportParquet(b *testing.B) {
	edges, relations, entities := benchSize()
	dir := b.TempDir()
	tsv := filepath.Join(dir, "edges.tsv")
	f, err := os.Create(tsv)
	if err != nil {
		b.Fatal(err)
	}
	if os.Getenv("BENCH_GRAPH") == "powerlaw" {
		p := powerLawSize()
		p.Relations = relations
		edges = p.Edges
		err = gen.WriteTSV(f, p)
	} else {
		err = GenerateTSV(f, edges, relations, entities, 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	f.Close()
	strPQ, intPQ, intTSV := writeBenchParquet(b, tsv, dir)
	for _, v := range []struct {
		name, in string
		ints     bool
	}{{"format=tsv/ids=string", tsv, false}, {"format=parquet/ids=string", strPQ, false},
		{"format=tsv/ids=int", intTSV, true}, {"format=parquet/ids=int", intPQ, true}} {
		b.Run(v.name, func(b *testing.B) {
			fi, _ := os.Stat(v.in)
			out := b.TempDir()
			doc := fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\n[entities.n]\nnum_partitions = 4\n",
				filepath.Join(out, "ent"), filepath.Join(out, "edges"))
			for r := 0; r < relations; r++ {
				name := "r" + strconv.Itoa(r)
				if v.ints {
					name = strconv.Itoa(r)
				}
				doc += fmt.Sprintf("[[relations]]\nname = %q\nlhs = \"n\"\nrhs = \"n\"\n", name)
			}
			cfg, err := config.Parse([]byte(doc), "toml")
			if err != nil {
				b.Fatal(err)
			}
			o := DefaultOptions()
			o.RelCol = 1
			b.SetBytes(fi.Size())
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				rep, err := Import(context.Background(), cfg, o, []string{v.in})
				if err != nil {
					b.Fatal(err)
				}
				if rep.EdgeSets[0].Edges != int64(edges) {
					b.Fatalf("%d edges", rep.EdgeSets[0].Edges)
				}
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(edges)*float64(b.N)/b.Elapsed().Seconds(), "edges/s")
			b.ReportMetric(float64(edges)*float64(b.N)/cpu.Seconds(), "edges/cpu-s")
			// CPU time (user + sys of the whole process) per edge: on a
			// loaded machine wall time is not comparable between runs,
			// but the ratio of these between formats is.
			b.ReportMetric(float64(cpu.Nanoseconds())/(float64(edges)*float64(b.N)), "cpu-ns/edge")
		})
	}
}
