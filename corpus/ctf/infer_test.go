package ctf

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

func TestInferStreams(t *testing.T) {
	in := "\xEF\xBB\xBF1 |a 1 2 3 |b 7:1 |# c 1:1 2 3 4 5\n1 |a 4 |b 2:1 12:3\n2\t|c 5 6|b\n" +
		"3 |d 0:1 junk |a 1 2 3 4\n"
	got, err := inferStreams(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []corpus.Stream{dense("a", 4), sparse("b", 13), dense("c", 2), sparse("d", 1)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// A line longer than the scanner's buffer.
	long := "1 |x" + strings.Repeat(" 1", 1<<20) + "\n"
	got, err = inferStreams(strings.NewReader(long))
	if err != nil || len(got) != 1 || got[0].Dim != 1<<20 {
		t.Errorf("long line: %v %v", got, err)
	}
	if got, _ := inferStreams(strings.NewReader("")); len(got) != 0 {
		t.Errorf("empty input: %v", got)
	}
}

// Invariant 12: InferStreams splits the file among goroutines at line starts: the result
// is the one-pass scan's for any number of pieces, including pieces that
// start inside long lines, after a byte order mark or at the end.
func TestInferFileSplitsLikeOneScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	names := []string{"a", "bb", "c", "#", "d1"}
	for trial := range 60 {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteString("\xEF\xBB\xBF")
		}
		for i := range rng.IntN(40) {
			fmt.Fprintf(&b, "%d", i)
			for range rng.IntN(4) {
				fmt.Fprintf(&b, " |%s", names[rng.IntN(len(names))])
				for range rng.IntN(6) {
					if rng.IntN(2) == 0 {
						fmt.Fprintf(&b, " %d:%d", rng.IntN(500), rng.IntN(3))
					} else {
						fmt.Fprintf(&b, "\t%d", rng.IntN(9))
					}
				}
			}
			if rng.IntN(5) == 0 {
				b.WriteString(strings.Repeat(" 7", rng.IntN(3000)))
			}
			b.WriteString("\n")
		}
		if rng.IntN(2) == 0 {
			b.WriteString("9 |a 1 2 3") // no final newline
		}
		want, err := inferStreams(strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		p := writeTemp(t, b.String())
		for _, n := range []int{1, 2, 3, 7} {
			got, err := inferPath(p, n, 1+int64(rng.IntN(200)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d, %d pieces: %v, want %v", trial, n, got, want)
			}
		}
	}
}

// FuzzInferStreams: inference never fails on bytes it can read, and the
// split scan agrees with the one-pass scan.
func FuzzInferStreams(f *testing.F) {
	f.Add([]byte("\xEF\xBB\xBF1 |a 1 2 |b 3:1\n2 |a 4\n"), uint8(3))
	f.Add([]byte("|x 1:2:3 |# c\n\n|y"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, pieces uint8) {
		want, err := inferStreams(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := inferPath(writeTemp(t, string(data)), 1+int(pieces%8), 1)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("split scan %v, one pass %v", got, want)
		}
		// The fast scan of a line finds what a plain reading of
		// the format (fields between '|', tokens between blanks) finds.
		fast, ref := inferState{seen: map[string]*inferred{}}, inferState{seen: map[string]*inferred{}}
		for _, line := range bytes.Split(data, []byte("\n")) {
			fast.line(line)
			inferLineRef(line, &ref)
		}
		if got, want := fast.streams(), ref.streams(); !reflect.DeepEqual(got, want) {
			t.Fatalf("line scan %v, reference %v", got, want)
		}
		// Reading in blocks of any size (lines carried over from one block
		// to the next, lines longer than a block, a byte order mark) finds
		// what the reference finds line by line.
		ref = inferState{seen: map[string]*inferred{}}
		for _, line := range bytes.Split(bytes.TrimPrefix(data, byteOrderMark), []byte("\n")) {
			inferLineRef(line, &ref)
		}
		blocks := inferState{seen: map[string]*inferred{}}
		if err := blocks.scanBlocks(bytes.NewReader(data), true, 1+int(pieces)%16); err != nil {
			t.Fatal(err)
		}
		if got, want := blocks.streams(), ref.streams(); !reflect.DeepEqual(got, want) {
			t.Fatalf("scan in blocks of %d: %v, reference %v", 1+int(pieces)%16, got, want)
		}
	})
}

// inferLineRef is inferState.line written with a search per field and per
// token, the reference FuzzInferStreams compares it with.
func inferLineRef(line []byte, st *inferState) {
	for {
		p := bytes.IndexByte(line, '|')
		if p < 0 {
			return
		}
		line = line[p+1:]
		if len(line) > 0 && line[0] == '#' {
			continue
		}
		e := 0
		for e < len(line) && !isNameEnd(line[e]) {
			e++
		}
		if e == 0 {
			continue
		}
		s := st.seen[string(line[:e])]
		if s == nil {
			s = &inferred{maxIndex: -1}
			st.seen[string(line[:e])] = s
			st.order = append(st.order, string(line[:e]))
		}
		line = line[e:]
		vals := line
		if end := bytes.IndexByte(line, '|'); end >= 0 {
			vals = line[:end]
		}
		count := 0
		for _, tok := range bytes.FieldsFunc(vals, func(r rune) bool { return r <= ' ' }) {
			count++
			if c := bytes.IndexByte(tok, ':'); c >= 0 {
				s.sparse = true
				if idx, j, err := parseUint(tok, 0); err == nil && j == c {
					s.maxIndex = max(s.maxIndex, idx)
				}
			}
		}
		s.maxCount = max(s.maxCount, count)
	}
}

// inferPath is inferFile of the file at path.
func inferPath(path string, n int, piece int64) ([]corpus.Stream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return inferFile(f, path, n, piece)
}
