package mixture

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	good := []struct {
		in   string
		path string
		w    Weight
	}{
		{"A.ctf=0.7", "A.ctf", Weight{7, 10, false}},
		{"a=b.ctf=2", "a=b.ctf", Weight{2, 1, false}},
		{"B.parquet=0.250", "B.parquet", Weight{1, 4, false}},
		{"s3://b/B.parquet=samples:5000000", "s3://b/B.parquet", Weight{5000000, 1, true}},
		{"x=007", "x", Weight{7, 1, false}},
	}
	for _, g := range good {
		s, err := ParseSpec(g.in)
		if err != nil || s.Path != g.path || s.Weight != g.w {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %s %+v", g.in, s, err, g.path, g.w)
		}
	}
	for _, bad := range []string{"A.ctf", "=0.5", "A=0", "A=0.0", "A=-1", "A=.5", "A=1.", "A=1e3", "A=samples:0",
		"A=samples:-3", "A=samples:+3", "A=nan", "A=1.2345678901234567890", "A=", "A=0x10"} {
		// Every refusal starts by naming the argument, as the flag shows it.
		if _, err := ParseSpec(bad); !errors.Is(err, ErrWeight) || !strings.HasPrefix(err.Error(), fmt.Sprintf("--mix %q: ", bad)) {
			t.Errorf("ParseSpec(%q): %v, want ErrWeight after the argument", bad, err)
		}
	}
}

func TestIntegers(t *testing.T) {
	cases := []struct {
		in   []Weight
		want []uint64
	}{
		{[]Weight{{7, 10, false}, {3, 10, false}}, []uint64{7, 3}},
		{[]Weight{{1, 2, false}, {1, 4, false}, {3, 1, false}}, []uint64{2, 1, 12}},
		{[]Weight{{5000000, 1, true}, {2000000, 1, true}}, []uint64{5, 2}},
	}
	for _, c := range cases {
		got, err := Integers(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Integers(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range [][]Weight{nil, {{7, 10, false}, {5, 1, true}}, {{1 << 63, 1, true}, {1<<63 + 1, 1, true}},
		{{999999999999999999, 1, false}, {1, 1000000000000000000, false}}} {
		if _, err := Integers(bad); !errors.Is(err, ErrWeight) {
			t.Errorf("Integers(%v): %v, want ErrWeight", bad, err)
		}
	}
}

// FuzzParseSpec: the --mix parser never panics, and what it accepts prints
// back (Weight.String) to a weight of the same value.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"A.ctf=0.7", "B=samples:12", "x=1.5", "=", "a=b=c", "A=99999999999999999999", "A=0.000000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sp, err := ParseSpec(s)
		if err != nil {
			return
		}
		if sp.Weight.Num == 0 || sp.Weight.Den == 0 || gcd(sp.Weight.Num, sp.Weight.Den) != 1 {
			t.Fatalf("%q: weight %+v is not a reduced positive fraction", s, sp.Weight)
		}
		if _, err := Integers([]Weight{sp.Weight, sp.Weight}); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	})
}
