package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

func parseString(t testing.TB, cfg *config.Config, o Options, text string) (*parser, *fileEdges, error) {
	return parseStringBlock(t, cfg, o, text, 0)
}

func parseStringBlock(t testing.TB, cfg *config.Config, o Options, text string, block int) (*parser, *fileEdges, error) {
	p := newParser(cfg, &o)
	p.block = block
	fe := &fileEdges{}
	err := p.parse(context.Background(), strings.NewReader(text), "in.tsv", fe, nil)
	return p, fe, err
}

func twoRelConfig(t testing.TB, dynamic bool) *config.Config {
	doc := "entity_path = \"e\"\nedge_paths = [\"s\"]\ncheckpoint_path = \"c\"\n[entities.a]\nnum_partitions = 2\n[entities.b]\nnum_partitions = 1\n[[relations]]\nname = \"x\"\nlhs = \"a\"\nrhs = \"b\"\n"
	if dynamic {
		doc = "dynamic_relations = true\n" + doc
	} else {
		doc += "[[relations]]\nname = \"y\"\nlhs = \"b\"\nrhs = \"a\"\n"
	}
	c, err := config.Parse([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Relation types choose the dictionaries: "x" edges are a->b, "y" b->a.
func TestTypedRelationsChooseDictionaries(t *testing.T) {
	o := DefaultOptions()
	o.RelCol = 1
	p, fe, err := parseString(t, twoRelConfig(t, false), o, "p\tx\tq\nq\ty\tp\np\tx\tp\n")
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.dicts["a"], p.dicts["b"]
	if strings.Join(a.names, ",") != "p" || strings.Join(b.names, ",") != "q,p" {
		t.Fatalf("a %v b %v", a.names, b.names)
	}
	if fe.lhs[1] != 0 || fe.rhs[1] != 0 || fe.rel[1] != 1 || fe.rhs[2] != 1 {
		t.Fatalf("edges %+v", fe)
	}
}

// Lines longer than the read block are handled (the buffer grows), and a
// last line without a newline counts.
func TestLongLinesAndNoFinalNewline(t *testing.T) {
	long := strings.Repeat("n", blockSize+100)
	o := DefaultOptions()
	o.RelCol = 1
	p, fe, err := parseString(t, twoRelConfig(t, true), o, "a\tr\tb\n"+long+"\tr\tc\nd\tr\te")
	if err != nil {
		t.Fatal(err)
	}
	if fe.len() != 3 || fe.lines != 3 || p.dicts["a"].names[1] != long {
		t.Fatalf("%d edges, %d lines", fe.len(), fe.lines)
	}
}

func TestOrdinalsSkipBadLines(t *testing.T) {
	fe := &fileEdges{rel: make([]uint32, 5), bad: []uint64{0, 3, 4}}
	// Edge lines: 0 bad, 1 good(0), 2 good(1), 3 bad, 4 bad, 5 good(2), 6 good(3), 7 good(4).
	want := []uint64{1, 2, 5, 6, 7}
	k := 0
	for idx, w := range want {
		var o uint64
		o, k = fe.ordinal(uint32(idx), k)
		if o != w {
			t.Errorf("edge %d: ordinal %d, want %d", idx, o, w)
		}
	}
}

// FuzzParse: the parser never panics; every line is accounted for
// (invariant 2); every kept edge refers to existing dictionary entries.
func FuzzParse(f *testing.F) {
	f.Add([]byte("a\tx\tb\n# c\n\nb\ty\ta\r\n"), uint8(0), true)
	f.Add([]byte("a,x,b,1.5\nq,x,\"r\",2\n"), uint8(1), false)
	f.Add([]byte("  a  x\tb  \n\t\n#\n1 2 3 4 5\n"), uint8(2), true)
	f.Add([]byte("\xef\xbb\xbfa\tx\tb\ta\tz\n\xff\tx\tb\n"), uint8(0), false)
	f.Fuzz(func(t *testing.T, data []byte, delim uint8, weight bool) {
		for _, dynamic := range []bool{false, true} {
			o := DefaultOptions()
			o.RelCol, o.Delimiter, o.MaxErrors = 1, Delimiter(delim%3), 1<<30
			if weight {
				o.WeightCol = 3
			}
			cfg := twoRelConfig(t, dynamic)
			p, fe, err := parseStringBlock(t, cfg, o, string(data), 16) // small blocks: lines span reads
			if err != nil {
				t.Fatalf("with an unlimited budget: %v", err)
			}
			lines := int64(bytes.Count(data, []byte{'\n'}))
			if len(data) > 0 && data[len(data)-1] != '\n' {
				lines++
			}
			if fe.lines != lines || fe.lines != fe.comments+fe.edgeLines || fe.edgeLines != int64(fe.len()+len(fe.bad)) {
				t.Fatalf("accounting: %d lines (want %d), %d comments, %d edge lines, %d edges, %d bad",
					fe.lines, lines, fe.comments, fe.edgeLines, fe.len(), len(fe.bad))
			}
			if p.budget.bad != len(fe.bad) {
				t.Fatalf("budget %d, bad %d", p.budget.bad, len(fe.bad))
			}
			for i := range fe.rel {
				d := p.relDicts[0]
				if !dynamic {
					d = p.relDicts[fe.rel[i]]
				}
				if int(fe.lhs[i]) >= len(d[0].names) || int(fe.rhs[i]) >= len(d[1].names) {
					t.Fatalf("edge %d refers to a missing entity", i)
				}
			}
			// With a budget of 0 the first bad line is the error.
			o.MaxErrors = 0
			_, _, err = parseStringBlock(t, cfg, o, string(data), 16)
			var be *BudgetError
			if (len(fe.bad) > 0) != errors.As(err, &be) {
				t.Fatalf("budget 0: bad lines %d, err %v", len(fe.bad), err)
			}
		}
	})
}

// The columns are reserved once, from the first block that holds enough
// edges to predict from: not from a block of comments, nor from a few
// lines.
func TestReserveWaitsForEdges(t *testing.T) {
	for _, c := range []struct {
		edges    int
		reserved bool
	}{{100, false}, {2000, true}} {
		var sb strings.Builder
		for sb.Len() < 4096 {
			sb.WriteString("# a comment line of the header\n")
		}
		for i := 0; i < c.edges; i++ {
			fmt.Fprintf(&sb, "a%d\tr\tb%d\n", i, i)
		}
		o := DefaultOptions()
		o.RelCol = 1
		p := newParser(twoRelConfig(t, true), &o)
		p.block, p.size = 4096, int64(sb.Len())
		fe := &fileEdges{}
		if err := p.parse(context.Background(), strings.NewReader(sb.String()), "in.tsv", fe, nil); err != nil {
			t.Fatal(err)
		}
		if fe.reserved != c.reserved || fe.len() != c.edges || cap(fe.rel) > 2*c.edges {
			t.Fatalf("%d edges: reserved %v, %d edges, capacity %d", c.edges, fe.reserved, fe.len(), cap(fe.rel))
		}
	}
}
