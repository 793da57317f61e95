package parquet

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/duckdbtest"
)

// leftOutRows is a SELECT with two streams (d dense, s sparse with its
// values), an id, and a column of every shape inference leaves out.
const leftOutRows = `select 'q' || i as id,
	[[i::FLOAT, 1::FLOAT]] as d,
	['a', 'b'] as tags,
	[1.5, 2.5] as price,
	[i % 4] as s,
	[0.5::DOUBLE] as s_values,
	[0.5::DOUBLE] as d_values,
	i::INTEGER as n,
	[[[1::INTEGER]]] as deep,
	{'a': 1, 'b': 2.0} as pair,
	[true] as flags
	from range(3) t(i)`

// TestInferLeftOut: the columns inference does not take are listed in
// schema order with the reason, and for a column Open refuses the reason
// is Open's message for it; the id and a sparse stream's values are not
// listed, and NAME_values beside a dense NAME is a stream of its own.
func TestInferLeftOut(t *testing.T) {
	duckdbtest.Need(t)
	p := filepath.Join(t.TempDir(), "duck.parquet")
	duckdbtest.Exec(t, "copy ("+leftOutRows+") to "+duckdbtest.Quote(p)+" (format parquet)")
	inf, err := Infer(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []corpus.Stream{{Name: "d", Dim: 2}, {Name: "s", Dim: 3, Sparse: true}, {Name: "d_values", Dim: 1}}
	if inf.Exact || !reflect.DeepEqual(inf.Streams, want) {
		t.Fatalf("streams %+v (exact %v), want %+v", inf.Streams, inf.Exact, want)
	}
	var got []string
	for _, l := range inf.LeftOut {
		got = append(got, l.Column)
	}
	if fmt.Sprint(got) != "[tags price n deep pair flags]" {
		t.Fatalf("left out %v", got)
	}
	reasons := map[string]string{"n": "one number per row, not a list", "pair": "a group of 2 fields"}
	for _, l := range inf.LeftOut {
		if w, ok := reasons[l.Column]; ok {
			if !strings.Contains(l.Reason, w) {
				t.Errorf("column %q: reason %q, want %q", l.Column, l.Reason, w)
			}
			continue
		}
		_, err := Open(p, Config{Streams: []corpus.Stream{{Name: l.Column, Dim: 2}}})
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrColumnType) || e.Msg != l.Reason {
			t.Errorf("column %q: reason %q, Open says %v", l.Column, l.Reason, err)
		}
	}
}

// TestInferNothingLeft: a file without a stream fails with the columns
// left out and their reasons.
func TestInferNothingLeft(t *testing.T) {
	duckdbtest.Need(t)
	p := filepath.Join(t.TempDir(), "duck.parquet")
	duckdbtest.Exec(t, "copy (select ['a'] as tags, [1.5] as price from range(3)) to "+duckdbtest.Quote(p)+" (format parquet)")
	_, err := Infer(p)
	if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), `column "tags" holds strings`) || !strings.Contains(err.Error(), `column "price" holds decimals`) {
		t.Fatalf("error %v, want the columns left out", err)
	}
}
