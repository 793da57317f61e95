package ctf

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// Invariant 6: dense and sparse values, comments, unknown streams, padding.
func TestParseValues(t *testing.T) {
	in := "1 |d 1 2 3 |s 4:0.5 1:-2 4:7 |# a comment |x 9 9 9\n" +
		"1 |d -1.5e1\t|s\r\n" +
		"2 |#only|s 0:1 |d 45. 0 1e-3\n"
	var warns []Error
	r := openString(t, in, Config{Streams: []corpus.Stream{dense("d", 3), sparse("s", 5)}}, &warns)
	ch := loadAll(t, r)[0]
	if ch.Bad != nil { // nil when every sequence parsed
		t.Fatalf("bad: %v", ch.Bad)
	}
	d, s := ch.Streams[0], ch.Streams[1]
	if want := []float32{1, 2, 3, -15, 0, 0, 45, 0, 0.001}; !reflect.DeepEqual(d.Dense, want) {
		t.Errorf("dense %v, want %v", d.Dense, want)
	}
	if !reflect.DeepEqual(d.SeqStart, []int32{0, 2, 3}) || !reflect.DeepEqual(s.SeqStart, []int32{0, 2, 3}) {
		t.Errorf("SeqStart %v %v", d.SeqStart, s.SeqStart)
	}
	if !reflect.DeepEqual(s.RowStart, []int32{0, 3, 3, 4}) || !reflect.DeepEqual(s.Indices, []int32{4, 1, 4, 0}) ||
		!reflect.DeepEqual(s.Values, []float32{0.5, -2, 7, 1}) {
		t.Errorf("sparse %v %v %v (file order, duplicates kept)", s.RowStart, s.Indices, s.Values)
	}
	kinds := map[string]int{}
	for _, w := range warns {
		kinds[Kind(w.Err)]++
	}
	if kinds["dense-short"] != 1 || kinds["unknown-stream"] != 1 {
		t.Errorf("warnings %v", warns)
	}
	for _, w := range warns {
		if errors.Is(w.Err, ErrDenseShort) && (w.Line != 2 || w.Col != 3 || w.Offset != 53) {
			t.Errorf("dense-short warning at %d:%d@%d, want 2:3@53", w.Line, w.Col, w.Offset)
		}
	}
}

// Invariants 6 and 7: every bad sequence is reported with its position and
// sentinel, and its data is empty.
func TestParseErrors(t *testing.T) {
	streams := []corpus.Stream{dense("A", 1), sparse("B", 10)}
	for _, tc := range []struct {
		line string
		err  error
		col  int
	}{
		{"1 |A 2,0 |B 2:2", ErrNumber, 7},
		{"1 |A 2.0 |B 2::2", ErrNumber, 15},
		{"1 |A 2:0 |B 2:2", ErrNumber, 7},
		{"1 |A 2.0 |B 2 ", ErrSparseEntry, 14},
		{"1 |A 2.0 |B 2.2", ErrSparseEntry, 14},
		{"1 |A 2#0 |B 2:2", ErrNumber, 7},
		{"1 |A 2.0f |B 2:2", ErrNumber, 9},
		{"1 |A 2.0 |B -2:2", ErrSparseEntry, 13},
		{"1 |A .5 |B 1:1", ErrNumber, 6},
		{"1 |A inf |B 1:1", ErrNumber, 6},
		{"1 |A 45.e3 |B 1:1", ErrNumber, 9},
		{"1 |A 1 |B 10:1", ErrIndexRange, 11},
		{"1 |A 1 1 |B 1:1", ErrDenseTooLong, 8},
		{"1 | A 1 |B 1:1", ErrStreamName, 4},
		{"1 |A 1 |B 1:1 |A 2", ErrDuplicateInput, 15},
		{"1 x |A 1 |B 1:1", ErrSyntax, 3},
		{"1 |A 1 |B 1:1\n\n", ErrEmptyRow, 1},
		{"1 |A 1 |B 1:1\n1 |C 5", ErrEmptyRow, 1},
		{"1 |A 1 |B 1:1\n1 |#comment only", ErrEmptyRow, 1},
		{"1 |A 1", ErrEmptyStream, 1},
		{"1 |A 1 |B 1:1\n1 |B 2:2\n1 |A 1", ErrSampleCount, 1},
		{"1 |A 1 |B 1:1e99", ErrNumber, 13},
	} {
		in := "0 |A 0 |B 0:0\n" + tc.line + "\n9 |A 9 |B 9:9\n"
		r := openString(t, in, Config{Streams: streams, MaxErrors: 1}, nil)
		ch := loadAll(t, r)[0]
		if ch.Len() != 3 || len(ch.Bad) != 3 || ch.BadAt(0) != nil || ch.BadAt(2) != nil {
			t.Errorf("%q: neighbours affected: %v", tc.line, ch.Bad)
			continue
		}
		e := asError(t, ch.BadAt(1))
		if !errors.Is(e, tc.err) || e.Col != tc.col || e.File == "" || !strings.Contains(e.Error(), "expected") {
			t.Errorf("%q: got %v (col %d), want %v at col %d", tc.line, e, e.Col, tc.err, tc.col)
		}
		if e.Offset < 14 || e.Line < 2 {
			t.Errorf("%q: position %d:%d offset %d", tc.line, e.Line, e.Col, e.Offset)
		}
		for s := range ch.Streams {
			if ch.SampleCount(s, 1) != 0 {
				t.Errorf("%q: bad sequence has data in stream %d", tc.line, s)
			}
		}
		if got := ch.Streams[0].Dense; !reflect.DeepEqual(got, []float32{0, 9}) {
			t.Errorf("%q: dense data %v, want [0 9]", tc.line, got)
		}
	}
}

// Invariant 3/6: with defines_mb_size, other streams may be longer or shorter.
func TestParseDefinesMBSize(t *testing.T) {
	in := "1 |a 1 |b 1\n1 |b 2\n1 |b 3\n"
	r := openString(t, in, Config{Streams: []corpus.Stream{dense("a", 1), dense("b", 1)}, DefinesMBSize: "a"}, nil)
	ch := loadAll(t, r)[0]
	if ch.BadAt(0) != nil || ch.SampleCount(0, 0) != 1 || ch.SampleCount(1, 0) != 3 || r.Layout().Samples[0] != 1 {
		t.Errorf("bad %v counts %d %d", ch.Bad, ch.SampleCount(0, 0), ch.SampleCount(1, 0))
	}
}
