package ctf

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Invariant 5: the grammar.
func TestParseRealGrammar(t *testing.T) {
	accept := map[string]float32{
		"1": 1, "-123": -123, "45.": 45, "6.78": 6.78, "9.10e-11": 9.10e-11, "+2": 2, "02.0": 2,
		"1E3": 1000, "1e+3": 1000, "-0": float32(math.Copysign(0, -1)), "0.000": 0, "3.4028235e38": math.MaxFloat32,
		"1e-50": 0, "1.401298464324817e-45": math.SmallestNonzeroFloat32,
	}
	for in, want := range accept {
		v, j, err := parseReal([]byte(in), 0)
		if err != nil || j != len(in) || math.Float32bits(v) != math.Float32bits(want) {
			t.Errorf("parseReal(%q) = %v, %d, %v; want %v consuming all", in, v, j, err, want)
		}
	}
	// Rejected outright, or accepted only as a shorter prefix (the caller
	// then rejects the following character).
	for _, in := range []string{"", "-", "+", ".5", "inf", "nan", "45.e3", "1e", "1e+", "e5", "1.0f", "2,0", "1e99", "-1e39", " 1"} {
		v, j, err := parseReal([]byte(in), 0)
		if err == nil && j == len(in) {
			t.Errorf("parseReal(%q) accepted as %v", in, v)
		}
	}
}

// Invariant 5: correct rounding, against strconv on random decimals,
// including near-midpoint float32 values.
func TestParseRealMatchesStrconv(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		var s string
		switch i % 4 {
		case 0:
			s = strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)), 'g', rng.IntN(17)+1, 64)
		case 1:
			// midpoint of two adjacent float32 values, written exactly
			f := math.Float32frombits(rng.Uint32() & 0x7f7fffff)
			g := math.Nextafter32(f, float32(math.Inf(1)))
			if math.IsInf(float64(g), 0) {
				continue
			}
			s = strconv.FormatFloat((float64(f)+float64(g))/2, 'e', -1, 64)
		case 2:
			s = strconv.FormatUint(rng.Uint64(), 10) + "." + strconv.FormatUint(rng.Uint64()%1000, 10) + "e" + strconv.Itoa(rng.IntN(60)-30)
		case 3:
			s = strconv.FormatFloat(float64(math.Float32frombits(rng.Uint32()&0x7f7fffff)), 'g', 9, 32)
		}
		want, werr := strconv.ParseFloat(s, 32)
		got, j, err := parseReal([]byte(s), 0)
		if werr != nil {
			if err == nil && j == len(s) && !math.IsInf(want, 0) {
				t.Fatalf("%q: strconv error %v, we accepted %v", s, werr, got)
			}
			continue
		}
		if err != nil || j != len(s) {
			t.Fatalf("%q rejected: %v at %d", s, err, j)
		}
		if math.Float32bits(got) != math.Float32bits(float32(want)) {
			t.Fatalf("%q = %v (%08x), strconv %v (%08x)", s, got, math.Float32bits(got), float32(want), math.Float32bits(float32(want)))
		}
	}
}
