package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

// kgConfig: users buy items, users follow users, items have tags
// (unpartitioned).
func kgConfig(t testing.TB, dir string, parts, sets int) *config.Config {
	t.Helper()
	doc := fmt.Sprintf(`
entity_path = %q
checkpoint_path = "ckpt"
seed = 7
[entities.user]
num_partitions = %d
[entities.item]
num_partitions = %d
[entities.tag]
num_partitions = 1
[[relations]]
name = "buys"
lhs = "user"
rhs = "item"
[[relations]]
name = "follows"
lhs = "user"
rhs = "user"
[[relations]]
name = "tagged"
lhs = "item"
rhs = "tag"
`, filepath.Join(dir, "ent"), parts, parts)
	var eps []string
	for i := 0; i < sets; i++ {
		eps = append(eps, strconv.Quote(filepath.Join(dir, fmt.Sprintf("edges%d", i))))
	}
	c, err := config.Parse([]byte("edge_paths = ["+strings.Join(eps, ", ")+"]\n"+doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type refEdge struct {
	lhs, rel, rhs string
	weight        float32
	ordinal       uint64
}

// genKG writes a random edge list with weights, comments, blank lines and
// (optionally) CRLF, and returns the edges a reference reader finds.
func genKG(t testing.TB, path string, n int, seed uint64, crlf bool) []refEdge {
	r := rand.New(rand.NewPCG(seed, 2))
	rels := []string{"buys", "follows", "tagged"}
	var b strings.Builder
	var want []refEdge
	eol := "\n"
	if crlf {
		eol = "\r\n"
	}
	b.WriteString("# header comment" + eol)
	for i := 0; i < n; i++ {
		if r.IntN(20) == 0 {
			b.WriteString(eol)
		}
		if r.IntN(20) == 0 {
			b.WriteString("#c\tx\ty" + eol)
		}
		rel := rels[r.IntN(3)]
		var l, rh string
		switch rel {
		case "buys":
			l, rh = fmt.Sprintf("u%d", r.IntN(200)), fmt.Sprintf("i%d", r.IntN(100))
		case "follows":
			l, rh = fmt.Sprintf("u%d", r.IntN(200)), fmt.Sprintf("u%d", r.IntN(200))
		default:
			l, rh = fmt.Sprintf("i%d", r.IntN(100)), fmt.Sprintf("t%d", r.IntN(5))
		}
		if i == 3 {
			l = "ü \"quoted\" name" // non-ASCII and quotes survive
		}
		w := float32(r.IntN(1000)) / 8 // exact in float32, mostly not integers
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s%s", l, rel, rh, strconv.FormatFloat(float64(w), 'g', -1, 32), eol)
		want = append(want, refEdge{l, rel, rh, w, uint64(i)})
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return want
}

func kgOptions() Options {
	o := DefaultOptions()
	o.RelCol, o.RhsCol, o.WeightCol = 1, 2, 3
	return o
}

// readAll reads a store back into reference edges, checking that every
// edge sits in the bucket of its entities' partitions, that ordinals
// increase inside a bucket, and that every bucket file exists.
func readAll(t *testing.T, c *config.Config) [][]refEdge {
	t.Helper()
	st, err := edgestore.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Verify(); err != nil {
		t.Fatal(err)
	}
	names := map[string][][]string{}
	for _, typ := range c.EntityTypes() {
		for p := 0; p < c.Entities[typ].NumPartitions; p++ {
			n, err := st.EntityNames(typ, p)
			if err != nil {
				t.Fatal(err)
			}
			names[typ] = append(names[typ], n)
		}
	}
	rels, err := st.RelationNames()
	if err != nil {
		t.Fatal(err)
	}
	L, R := st.Partitions()
	out := make([][]refEdge, st.NumEdgeSets())
	for s := range out {
		for l := 0; l < L; l++ {
			for r := 0; r < R; r++ {
				b := graph.Bucket{Lhs: l, Rhs: r}
				if _, err := os.Stat(filepath.Join(c.EdgePaths[s], edgestore.BucketFile(l, r))); err != nil {
					t.Errorf("bucket file missing: %v", err)
				}
				n, err := st.NumEdges(s, b)
				if err != nil {
					t.Fatal(err)
				}
				var e graph.Edges
				if err := st.ReadEdges(s, b, 0, n, &e); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < n; i++ {
					rel := c.Relations[0]
					if !c.DynamicRelations {
						rel = c.Relations[e.Rel[i]]
					}
					lp, rp := l, r
					if c.Entities[rel.Lhs].NumPartitions == 1 {
						lp = 0
					}
					if c.Entities[rel.Rhs].NumPartitions == 1 {
						rp = 0
					}
					if lp != l && c.Entities[rel.Lhs].NumPartitions == 1 || rp != r && c.Entities[rel.Rhs].NumPartitions == 1 {
						t.Fatalf("unpartitioned entity outside partition 0")
					}
					x := refEdge{lhs: names[rel.Lhs][lp][e.Lhs[i]], rhs: names[rel.Rhs][rp][e.Rhs[i]], rel: rels[e.Rel[i]], ordinal: e.Ordinal[i]}
					if e.Weight != nil {
						x.weight = e.Weight[i]
					}
					if i > 0 && e.Ordinal[i] <= e.Ordinal[i-1] {
						t.Fatalf("bucket %v: ordinals not in file order", b)
					}
					out[s] = append(out[s], x)
				}
			}
		}
		sort.Slice(out[s], func(i, j int) bool { return out[s][i].ordinal < out[s][j].ordinal })
	}
	return out
}

// Invariants 1 and 2: round trip of two edge sets, CRLF in one.
func TestImportRoundTrip(t *testing.T) {
	for _, parts := range []int{1, 3} {
		dir := t.TempDir()
		c := kgConfig(t, dir, parts, 2)
		w0 := genKG(t, filepath.Join(dir, "a.tsv"), 3000, 1, false)
		w1 := genKG(t, filepath.Join(dir, "b.tsv"), 2000, 2, true)
		rep, err := Import(context.Background(), c, kgOptions(), []string{filepath.Join(dir, "a.tsv"), filepath.Join(dir, "b.tsv")})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, c)
		if !reflect.DeepEqual(got[0], w0) || !reflect.DeepEqual(got[1], w1) {
			t.Fatalf("parts %d: stored edges differ from the input", parts)
		}
		if rep.Buckets != parts*parts || rep.Partitions != [2]int{parts, parts} {
			t.Errorf("report shape %+v", rep)
		}
		for i, es := range rep.EdgeSets {
			if es.Lines != es.CommentLines+es.EdgeLines || es.EdgeLines != es.Edges+es.Skipped || es.Skipped != 0 {
				t.Errorf("edge set %d accounting %+v", i, es)
			}
		}
		if rep.EdgeSets[0].Edges != 3000 || rep.Entities["tag"] != 5 || rep.Entities["item"] == 0 {
			t.Errorf("report %+v", rep)
		}
		// PBG's partition sizes: ceil ranges.
		st, _ := edgestore.Open(c)
		for _, typ := range []string{"user", "item"} {
			n := rep.Entities[typ]
			for p := 0; p < parts; p++ {
				got, _ := st.EntityCount(typ, p)
				if want := partStart(p+1, n, parts) - partStart(p, n, parts); got != want {
					t.Errorf("%s/%d: %d entities, want %d", typ, p, got, want)
				}
			}
		}
		st.Close()
	}
}

// Empty buckets exist: a graph whose edges all fall in one bucket.
func TestEmptyBucketsWritten(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 4, 1)
	os.WriteFile(filepath.Join(dir, "one.tsv"), []byte("u1\tbuys\ti1\n"), 0o644)
	o := DefaultOptions()
	o.RelCol = 1
	rep, err := Import(context.Background(), c, o, []string{filepath.Join(dir, "one.tsv")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EdgeSets[0].EmptyBuckets != 15 || rep.EdgeSets[0].LargestBucket != 1 {
		t.Errorf("report %+v", rep.EdgeSets[0])
	}
	got := readAll(t, c)
	if len(got[0]) != 1 || got[0][0] != (refEdge{lhs: "u1", rel: "buys", rhs: "i1"}) {
		t.Errorf("got %+v", got)
	}
}

const badInput = "# comment\n" +
	"u1\tbuys\ti1\t1.5\n" + // line 2, ordinal 0
	"u2\tbuys\n" + // line 3: too few fields
	"u3\tsells\ti3\t1\n" + // line 4: unknown relation, column 4
	"\n" + // line 5: empty
	"u4\tbuys\ti4\tabc\n" + // line 6: bad weight, column 12
	"u5\tbuys\ti5\t2\textra\n" + // line 7: five fields
	"\tbuys\ti6\t1\n" + // line 8: empty lhs, column 1
	"u7\tbuys\ti7\tInf\n" + // line 9: bad weight
	"u8\tbuys\t\xff\t1\n" + // line 10: invalid UTF-8, column 9
	"u9\tbuys\ti9\t-0.25\n" // line 11, ordinal 9

func TestBadLinesAndBudget(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.tsv")
	os.WriteFile(in, []byte(badInput), 0o644)
	c := kgConfig(t, dir, 2, 1)
	// Budget 0: the first bad line is fatal and names file, line.
	_, err := Import(context.Background(), c, kgOptions(), []string{in})
	var be *BudgetError
	if !errors.As(err, &be) || be.Last.Line != 3 || !strings.Contains(err.Error(), in+":3: wrong column count") {
		t.Fatalf("budget 0: %v", err)
	}
	if _, err := os.Stat(c.EntityPath); !os.IsNotExist(err) {
		t.Fatal("a failed import left entity_path")
	}
	// Budget 6 is one short.
	o := kgOptions()
	o.MaxErrors = 6
	if _, err := Import(context.Background(), c, o, []string{in}); !errors.As(err, &be) || be.Bad != 7 || be.Last.Line != 10 {
		t.Fatalf("budget 6: %v", err)
	}
	o.MaxErrors = 7
	rep, err := Import(context.Background(), c, o, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		line int64
		col  int
		r    Reason
	}{{3, 0, ReasonColumns}, {4, 4, ReasonRelation}, {6, 12, ReasonWeight}, {7, 0, ReasonColumns},
		{8, 1, ReasonEmpty}, {9, 12, ReasonWeight}, {10, 9, ReasonUTF8}}
	if len(rep.BadLines) != len(want) {
		t.Fatalf("bad lines %v", rep.BadLines)
	}
	for i, w := range want {
		b := rep.BadLines[i]
		if b.Line != w.line || b.Column != w.col || b.Reason != w.r || b.File != in {
			t.Errorf("bad line %d: %+v, want %+v", i, b, w)
		}
	}
	if rep.Skipped != 7 || rep.SkippedByReason[ReasonWeight] != 2 || rep.SkippedByReason[ReasonColumns] != 2 {
		t.Errorf("report counts %+v", rep.SkippedByReason)
	}
	es := rep.EdgeSets[0]
	if es.Lines != 11 || es.CommentLines != 2 || es.EdgeLines != 9 || es.Edges != 2 || es.Skipped != 7 {
		t.Errorf("accounting %+v", es)
	}
	got := readAll(t, c)[0]
	exp := []refEdge{{"u1", "buys", "i1", 1.5, 0}, {"u9", "buys", "i9", -0.25, 8}}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("kept %+v, want %+v", got, exp)
	}
	// Entities of bad lines are not in the dictionaries.
	if rep.Entities["user"] != 2 || rep.Entities["item"] != 2 {
		t.Errorf("entities %v", rep.Entities)
	}
}

// CRLF, comments and blank lines do not change the store (not counted in
// ordinals); the delimiters agree.
func TestFormatsAgree(t *testing.T) {
	lines := []string{"a\tr\tb", "b\tr\tc", "c\tr\ta", "a\tr\tc"}
	variants := map[string]struct {
		text  string
		delim Delimiter
	}{
		"tsv":   {strings.Join(lines, "\n") + "\n", Tab},
		"crlf":  {"\xef\xbb\xbf# c\r\n" + strings.Join(lines, "\r\n"), Tab},
		"csv":   {strings.ReplaceAll("#x\n\n"+strings.Join(lines, "\n"), "\t", ","), Comma},
		"space": {strings.ReplaceAll("  \n"+strings.Join(lines, "\n  \n"), "\t", " \t  ") + "   \n", Space},
	}
	var first [][]refEdge
	for name, v := range variants {
		dir := t.TempDir()
		c, err := config.Parse([]byte(fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\n[entities.n]\nnum_partitions = 2\n[[relations]]\nname = \"r\"\nlhs = \"n\"\nrhs = \"n\"\n",
			filepath.Join(dir, "e"), filepath.Join(dir, "s"))), "toml")
		if err != nil {
			t.Fatal(err)
		}
		in := filepath.Join(dir, "in")
		os.WriteFile(in, []byte(v.text), 0o644)
		o := DefaultOptions()
		o.RelCol, o.Delimiter = 1, v.delim
		if _, err := Import(context.Background(), c, o, []string{in}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := readAll(t, c)
		if len(got[0]) != 4 {
			t.Fatalf("%s: %d edges", name, len(got[0]))
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(first, got) {
			t.Errorf("%s differs: %+v vs %+v", name, got, first)
		}
	}
}

func TestDynamicRelations(t *testing.T) {
	dir := t.TempDir()
	c, err := config.Parse([]byte(fmt.Sprintf("dynamic_relations = true\nentity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\n[entities.n]\nnum_partitions = 2\n[[relations]]\nname = \"all\"\nlhs = \"n\"\nrhs = \"n\"\n",
		filepath.Join(dir, "e"), filepath.Join(dir, "s"))), "toml")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("a\tzeta\tb\nb\talpha\tc\nc\tzeta\ta\nd\tmid\ta\n"), 0o644)
	o := DefaultOptions()
	o.RelCol = 1
	rep, err := Import(context.Background(), c, o, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rep.Relations, []string{"zeta", "alpha", "mid"}) {
		t.Errorf("relation ids %v, want first-appearance order", rep.Relations)
	}
	got := readAll(t, c)[0]
	if got[0].rel != "zeta" || got[1].rel != "alpha" || got[3].rel != "mid" {
		t.Errorf("%+v", got)
	}
	b, _ := os.ReadFile(filepath.Join(c.EntityPath, "dynamic_rel_count.txt"))
	if string(b) != "3\n" {
		t.Errorf("dynamic_rel_count.txt = %q", b)
	}
}

func TestFileCountMustMatchEdgePaths(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 1, 2)
	genKG(t, filepath.Join(dir, "a"), 10, 1, false)
	if _, err := Import(context.Background(), c, kgOptions(), []string{filepath.Join(dir, "a")}); err == nil || !strings.Contains(err.Error(), "edge_paths") {
		t.Fatalf("%v", err)
	}
}

// Invariant 3: an injected failure at any step, or a cancellation, leaves
// the previous store intact.
func TestImportAtomic(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 2, 2)
	a0, a1 := filepath.Join(dir, "a0"), filepath.Join(dir, "a1")
	genKG(t, a0, 500, 1, false)
	genKG(t, a1, 500, 2, false)
	if _, err := Import(context.Background(), c, kgOptions(), []string{a0, a1}); err != nil {
		t.Fatal(err)
	}
	old := readAll(t, c)
	b0, b1 := filepath.Join(dir, "b0"), filepath.Join(dir, "b1")
	genKG(t, b0, 700, 3, false)
	genKG(t, b1, 700, 4, true)
	var steps []string
	var mu sync.Mutex // bucket files close on several goroutines
	o := kgOptions()
	o.hook = func(s string) error {
		mu.Lock()
		defer mu.Unlock()
		steps = append(steps, s)
		return nil
	}
	// Dry run elsewhere to learn the steps.
	c2 := kgConfig(t, t.TempDir(), 2, 2)
	if _, err := Import(context.Background(), c2, o, []string{b0, b1}); err != nil {
		t.Fatal(err)
	}
	closes := 0
	for _, s := range steps {
		if strings.HasSuffix(s, " close") {
			closes++ // a failure there comes from a goroutine of writeSet's
		}
	}
	if closes != 2*2*2 {
		t.Fatalf("%d bucket close steps in %v", closes, steps)
	}
	boom := errors.New("disk full (injected)")
	for _, step := range steps {
		if step == "cleanup" {
			continue
		}
		o.hook = func(s string) error {
			if s == step {
				return boom
			}
			return nil
		}
		if _, err := Import(context.Background(), c, o, []string{b0, b1}); !errors.Is(err, boom) {
			t.Fatalf("step %s: %v", step, err)
		}
		if got := readAll(t, c); !reflect.DeepEqual(got, old) {
			t.Fatalf("step %s: old store changed", step)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.hook = nil
	o.Progress = func(p Progress) {
		if p.Phase == "write" {
			cancel()
		}
	}
	if _, err := Import(ctx, c, o, []string{b0, b1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	if got := readAll(t, c); !reflect.DeepEqual(got, old) {
		t.Fatal("cancelled import changed the store")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// Invariant 4: byte-identical stores from the same input and seed.
func TestImportDeterministic(t *testing.T) {
	var snaps []map[string][]byte
	for i := 0; i < 2; i++ {
		dir := t.TempDir()
		c := kgConfig(t, dir, 3, 1)
		in := filepath.Join(dir, "in")
		genKG(t, in, 2000, 5, false)
		if _, err := Import(context.Background(), c, kgOptions(), []string{in}); err != nil {
			t.Fatal(err)
		}
		snap := map[string][]byte{}
		for _, d := range []string{c.EntityPath, c.EdgePaths[0]} {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				b, _ := os.ReadFile(filepath.Join(d, e.Name()))
				if e.Name() == edgestore.EdgeManifestName {
					b = bytes.ReplaceAll(b, []byte(dir), nil) // the source path differs
				}
				snap[filepath.Base(d)+"/"+e.Name()] = b
			}
		}
		snaps = append(snaps, snap)
	}
	if len(snaps[0]) < 10 {
		t.Fatalf("only %d files", len(snaps[0]))
	}
	for k, v := range snaps[0] {
		if k == "edges0/"+edgestore.EdgeManifestName {
			continue // holds the source path, which differs (and so its checksum)
		}
		if !bytes.Equal(v, snaps[1][k]) {
			t.Errorf("%s differs between identical imports", k)
		}
	}
}
