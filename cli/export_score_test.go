package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The export alone scores edges as eval does (docs/training.md, "Scoring
// from an export"): for each model setting below, a model trained on
// Nations is exported as TSV and as binary; the test reads both files by
// hand (no batchprep code), checks that they hold the same values, ranks
// every test edge with its own implementation of the operators and
// comparators, and gets eval's count, unknown, MRR, Hits@k and mean rank
// exactly; so does python/tools/score_export.py when python3 is
// installed. Also: --out - writes the export to stdout.
func TestExportReproducesEval(t *testing.T) {
	for _, v := range []struct {
		op, cmp string
		dynamic bool
	}{
		{"diagonal", "cos", true},
		{"complex_diagonal", "dot", true},
		{"affine", "l2", true},
		{"translation", "squared_l2", false},
		{"linear", "cos", false},
		{"none", "dot", false},
	} {
		t.Run(fmt.Sprintf("%s-%s-dynamic-%v", v.op, v.cmp, v.dynamic), func(t *testing.T) {
			dir, cfg := exportFixture(t, v.op, v.cmp, v.dynamic)
			if code, _, errOut := run(t, "train", "--quiet", "--config", cfg); code != 0 {
				t.Fatalf("train: %s", errOut)
			}
			tsv, bin := filepath.Join(dir, "model.tsv"), filepath.Join(dir, "model.bin")
			for _, a := range [][]string{{"--out", tsv}, {"--format", "binary", "--out", bin}} {
				if code, _, errOut := run(t, append([]string{"export", "--config", cfg}, a...)...); code != 0 {
					t.Fatalf("export %v: %s", a, errOut)
				}
			}
			// --out - is stdout, byte for byte the file.
			for _, f := range [][2]string{{"tsv", tsv}, {"binary", bin}} {
				code, out, errOut := run(t, "export", "--config", cfg, "--format", f[0], "--out", "-")
				if data, _ := os.ReadFile(f[1]); code != 0 || out != string(data) {
					t.Fatalf("export --format %s --out -: exit %d, %d bytes on stdout, the file %d (%s)", f[0], code, len(out), len(data), errOut)
				}
			}
			code, out, errOut := run(t, "eval", "--config", cfg, "--rel-col", "1", "--edges", filepath.Join(dir, "test.txt"),
				"--filter", filepath.Join(dir, "train.txt"), "--filter", filepath.Join(dir, "valid.txt"), "--format", "json")
			if code != 0 {
				t.Fatalf("eval: %s", errOut)
			}
			var all map[string]any
			if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &all); err != nil {
				t.Fatalf("eval output %q: %v", out, err)
			}
			want := map[string]float64{}
			for k, v := range all {
				if f, ok := v.(float64); ok {
					want[k] = f
				}
			}
			x := readTSVExport(t, tsv)
			readBinaryExport(t, bin, x)
			if x.cmp != v.cmp {
				t.Fatalf("comparator %q, want %q", x.cmp, v.cmp)
			}
			got := x.rank(t, filepath.Join(dir, "test.txt"), filepath.Join(dir, "train.txt"), filepath.Join(dir, "valid.txt"))
			for _, k := range []string{"count", "unknown", "mrr", "hits@1", "hits@3", "hits@10", "mean_rank"} {
				if got[k] != want[k] {
					t.Errorf("%s: from the export %v, eval %v", k, got[k], want[k])
				}
			}
			if want["count"] < 300 {
				t.Fatalf("only %v ranks", want["count"])
			}
			// The standalone Python reference, when python3 is here.
			py, err := exec.LookPath("python3")
			if err != nil {
				t.Log("python3 not found: python/tools/score_export.py not checked")
				return
			}
			pyOut, err := exec.Command(py, filepath.Join("..", "python", "tools", "score_export.py"), tsv, filepath.Join(dir, "test.txt"),
				"--filter", filepath.Join(dir, "train.txt"), "--filter", filepath.Join(dir, "valid.txt")).Output()
			var fromPy map[string]float64
			if err != nil || json.Unmarshal(pyOut, &fromPy) != nil {
				t.Fatalf("score_export.py: %v: %s", err, pyOut)
			}
			for _, k := range []string{"count", "unknown", "mrr", "hits@1", "hits@3", "hits@10", "mean_rank"} {
				if fromPy[k] != want[k] {
					t.Errorf("%s: score_export.py %v, eval %v", k, fromPy[k], want[k])
				}
			}
		})
	}
}

// exportFixture imports Nations under a config with one operator for
// every relation: dynamic relations (one config relation), or one config
// relation per relation name with global embeddings.
func exportFixture(t *testing.T, op, cmp string, dynamic bool) (dir, cfgPath string) {
	t.Helper()
	dir = t.TempDir()
	var rels []string
	seen := map[string]bool{}
	for _, name := range []string{"train.txt", "valid.txt", "test.txt"} {
		data, err := nationsFS.ReadFile("kgdata/nations/" + name)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if f := strings.Split(l, "\t"); name == "train.txt" && !seen[f[1]] {
				seen[f[1]] = true
				rels = append(rels, f[1])
			}
		}
	}
	if dynamic {
		rels = []string{"all"}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = %q\n", filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"))
	fmt.Fprintf(&b, "dimension = 8\nnum_epochs = 3\nbatch_size = 100\nlr = 0.1\neval_fraction = 0\nworkers = 1\ncomparator = %q\n", cmp)
	fmt.Fprintf(&b, "dynamic_relations = %v\nglobal_emb = %v\n\n[entities.country]\nnum_partitions = 2\n", dynamic, !dynamic)
	for _, r := range rels {
		fmt.Fprintf(&b, "\n[[relations]]\nname = %q\nlhs = \"country\"\nrhs = \"country\"\noperator = %q\n", r, op)
	}
	cfgPath = filepath.Join(dir, "c.toml")
	os.WriteFile(cfgPath, []byte(b.String()), 0o644)
	if code, _, errOut := run(t, "import", "--quiet", "--config", cfgPath, "--rel-col", "1", filepath.Join(dir, "train.txt")); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	return dir, cfgPath
}

// exportedModel is an export as read by hand.
type exportedModel struct {
	cmp   string
	types map[string]*exportedType
	rels  map[string]map[string]exportedRel // name -> side -> parameters
}

type exportedType struct {
	names []string
	ids   map[string]int
	emb   [][]float32
}

type exportedRel struct {
	lhs, rhs, op string
	p            []float32
}

func floats32(t *testing.T, fields []string) []float32 {
	t.Helper()
	var v []float32
	for _, s := range fields {
		x, err := strconv.ParseFloat(s, 32)
		if err != nil {
			t.Fatalf("value %q: %v", s, err)
		}
		v = append(v, float32(x))
	}
	return v
}

func readTSVExport(t *testing.T, path string) *exportedModel {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	x := &exportedModel{types: map[string]*exportedType{}, rels: map[string]map[string]exportedRel{}}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		f := strings.Split(l, "\t")
		switch f[0] {
		case "@comparator":
			x.cmp = f[1]
		case "@relation":
			if x.rels[f[1]] == nil {
				x.rels[f[1]] = map[string]exportedRel{}
			}
			x.rels[f[1]][f[4]] = exportedRel{lhs: f[2], rhs: f[3], op: f[5], p: floats32(t, f[6:])}
		default:
			ty := x.types[f[0]]
			if ty == nil {
				ty = &exportedType{ids: map[string]int{}}
				x.types[f[0]] = ty
			}
			ty.ids[f[1]] = len(ty.names)
			ty.names = append(ty.names, f[1])
			ty.emb = append(ty.emb, floats32(t, f[2:]))
		}
	}
	return x
}

// readBinaryExport parses the binary layout of docs/training.md and checks
// that it holds what the TSV export holds.
func readBinaryExport(t *testing.T, path string, x *exportedModel) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := b[:len(b)-4]
	if string(b[:8]) != "BPEMBED2" || crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		t.Fatal("binary export: bad magic or checksum")
	}
	r := bytes.NewReader(body[8:])
	u32 := func() uint32 { var v uint32; binary.Read(r, binary.LittleEndian, &v); return v }
	str := func() string { s := make([]byte, u32()); r.Read(s); return string(s) }
	vec := func(n int) []float32 { v := make([]float32, n); binary.Read(r, binary.LittleEndian, v); return v }
	if c := str(); c != x.cmp {
		t.Fatalf("binary comparator %q, TSV %q", c, x.cmp)
	}
	for range u32() {
		name, dim := str(), int(u32())
		var count uint64
		binary.Read(r, binary.LittleEndian, &count)
		ty := x.types[name]
		for i := range int(count) {
			if n := str(); ty == nil || ty.names[i] != n {
				t.Fatalf("binary entity %d of %s: %q", i, name, n)
			}
		}
		for i := range int(count) {
			if v := vec(dim); fmt.Sprint(v) != fmt.Sprint(ty.emb[i]) {
				t.Fatalf("binary %s %s: %v, TSV %v", name, ty.names[i], v, ty.emb[i])
			}
		}
	}
	n := 0
	for range u32() {
		name, lhs, rhs, side, op := str(), str(), str(), str(), str()
		got := exportedRel{lhs: lhs, rhs: rhs, op: op, p: vec(int(u32()))}
		if fmt.Sprint(got) != fmt.Sprint(x.rels[name][side]) {
			t.Fatalf("binary relation %s %s: %v, TSV %v", name, side, got, x.rels[name][side])
		}
		n++
	}
	if r.Len() != 0 || n == 0 {
		t.Fatalf("binary export: %d bytes left, %d relation entries", r.Len(), n)
	}
}

// apply is an operator as docs/training.md defines it.
func apply(op string, p, x []float64) []float64 {
	d := len(x)
	y := make([]float64, d)
	switch op {
	case "none":
		copy(y, x)
	case "translation":
		for i := range y {
			y[i] = x[i] + p[i]
		}
	case "diagonal":
		for i := range y {
			y[i] = x[i] * p[i]
		}
	case "complex_diagonal":
		h := d / 2
		for i := range h {
			y[i] = x[i]*p[i] - x[h+i]*p[h+i]
			y[h+i] = x[i]*p[h+i] + x[h+i]*p[i]
		}
	case "linear", "affine":
		for i := range y {
			for j := range x {
				y[i] += p[i*d+j] * x[j]
			}
			if op == "affine" {
				y[i] += p[d*d+i]
			}
		}
	}
	return y
}

// compare is a comparator as docs/training.md defines it.
func compare(cmp string, a, b []float64) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab, aa, bb = ab+a[i]*b[i], aa+a[i]*a[i], bb+b[i]*b[i]
	}
	switch cmp {
	case "dot":
		return ab
	case "cos":
		return ab / (max(math.Sqrt(aa), 1e-12) * max(math.Sqrt(bb), 1e-12))
	case "l2":
		return -math.Sqrt(max(aa+bb-2*ab, 0))
	}
	return -max(aa+bb-2*ab, 0)
}

func to64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

type tri struct {
	rel  string
	u, v int
}

func (x *exportedModel) readEdges(t *testing.T, path string) (known []tri, unknown int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Split(sc.Text(), "\t")
		r, ok := x.rels[fl[1]]["rhs"]
		if !ok {
			unknown++
			continue
		}
		u, ok1 := x.types[r.lhs].ids[fl[0]]
		v, ok2 := x.types[r.rhs].ids[fl[2]]
		if !ok1 || !ok2 {
			unknown++
			continue
		}
		known = append(known, tri{fl[1], u, v})
	}
	return known, unknown
}

// rank ranks every test edge on both sides, filtered, ties against it, and
// returns eval's metrics.
func (x *exportedModel) rank(t *testing.T, test string, filters ...string) map[string]float64 {
	edges, unknown := x.readEdges(t, test)
	trueRhs, trueLhs := map[tri]bool{}, map[tri]bool{}
	for _, f := range append(filters, test) {
		es, _ := x.readEdges(t, f)
		for _, e := range es {
			trueRhs[e], trueLhs[e] = true, true
		}
	}
	var ranks []float64
	for _, corruptRhs := range []bool{true, false} {
		for _, e := range edges {
			rhsOp := x.rels[e.rel]["rhs"]
			lhsOp, dyn := x.rels[e.rel]["lhs"]
			var cands [][]float32
			var score func(c []float32) float64
			truth := e.v
			if corruptRhs {
				cands = x.types[rhsOp.rhs].emb
				lhs := to64(x.types[rhsOp.lhs].emb[e.u])
				if dyn {
					f := apply(lhsOp.op, to64(lhsOp.p), lhs)
					score = func(c []float32) float64 { return compare(x.cmp, f, to64(c)) }
				} else {
					score = func(c []float32) float64 { return compare(x.cmp, lhs, apply(rhsOp.op, to64(rhsOp.p), to64(c))) }
				}
			} else {
				truth = e.u
				cands = x.types[rhsOp.lhs].emb
				f := apply(rhsOp.op, to64(rhsOp.p), to64(x.types[rhsOp.rhs].emb[e.v]))
				score = func(c []float32) float64 { return compare(x.cmp, to64(c), f) }
			}
			ts := score(cands[truth])
			rank := 1.0
			for c, emb := range cands {
				other := tri{e.rel, e.u, c}
				if !corruptRhs {
					other = tri{e.rel, c, e.v}
				}
				if c != truth && !trueRhs[other] && score(emb) >= ts {
					rank++
				}
			}
			ranks = append(ranks, rank)
		}
	}
	m := map[string]float64{"count": float64(len(ranks)), "unknown": float64(unknown)}
	for _, r := range ranks {
		m["mrr"] += 1 / r
		m["mean_rank"] += r
		for _, k := range []float64{1, 3, 10} {
			if r <= k {
				m[fmt.Sprintf("hits@%v", k)]++
			}
		}
	}
	for _, k := range []string{"mrr", "mean_rank", "hits@1", "hits@3", "hits@10"} {
		m[k] /= float64(len(ranks))
	}
	return m
}
