package ctf

import (
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
