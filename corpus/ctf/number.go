package ctf

import (
	"math"
	"strconv"
)

// pow10 holds the powers of ten that are exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// numErr says why a number was rejected: the byte index of the offending
// character and what was expected there.
type numErr struct {
	at   int
	want string
	rng  bool // well-formed but outside the float32 range
}

func isDigit(c byte) bool { return c-'0' < 10 }

// parseReal parses the longest prefix of b[i:] that the grammar
//
//	[+-] digit+ [ '.' digit* ] [ (e|E) [+-] digit+ ]
//
// accepts, where an exponent may not follow a '.' without fraction digits
// ("45.e3" is rejected, "45." is 45). It returns the value correctly rounded
// to float32 and the index just past the number. It does not look at the
// byte that follows; callers check that it is a delimiter.
func parseReal(b []byte, i int) (float32, int, *numErr) {
	start := i
	n := len(b)
	neg := false
	if i < n && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	var mant uint64
	nd := 0 // significant digits in mant
	exp := 0
	trunc := false
	d0 := i
	for i < n && isDigit(b[i]) {
		if nd < 19 {
			if mant != 0 || b[i] != '0' {
				mant = mant*10 + uint64(b[i]-'0')
				nd++
			}
		} else {
			exp++
			if b[i] != '0' {
				trunc = true
			}
		}
		i++
	}
	if i == d0 {
		return 0, i, &numErr{at: i, want: "a digit"}
	}
	bareDot := false
	if i < n && b[i] == '.' {
		i++
		f0 := i
		for i < n && isDigit(b[i]) {
			if nd < 19 {
				if mant != 0 || b[i] != '0' {
					mant = mant*10 + uint64(b[i]-'0')
					nd++
				}
				exp--
			} else if b[i] != '0' {
				trunc = true
			}
			i++
		}
		bareDot = i == f0
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		if bareDot {
			return 0, i, &numErr{at: i, want: "a fraction digit before the exponent"}
		}
		i++
		eneg := false
		if i < n && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		e0 := i
		e := 0
		for i < n && isDigit(b[i]) {
			if e < 100000 {
				e = e*10 + int(b[i]-'0')
			}
			i++
		}
		if i == e0 {
			return 0, i, &numErr{at: i, want: "an exponent digit"}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant == 0 {
		if neg {
			return float32(math.Copysign(0, -1)), i, nil
		}
		return 0, i, nil
	}
	if !trunc && mant < 1<<53 && exp >= -22 && exp <= 22 {
		f := float64(mant)
		if exp < 0 {
			f /= pow10[-exp]
		} else {
			f *= pow10[exp]
		}
		// f is the correctly rounded float64 of the exact value. Rounding
		// it again to float32 is correct unless f sits exactly on a
		// float32 midpoint (or outside the normal float32 range, where the
		// number of dropped bits differs): then ask strconv.
		if f >= 0x1p-126 && f <= math.MaxFloat32 && math.Float64bits(f)&(1<<29-1) != 1<<28 {
			if neg {
				f = -f
			}
			return float32(f), i, nil
		}
	}
	v, err := strconv.ParseFloat(string(b[start:i]), 32)
	if err != nil {
		return 0, i, &numErr{at: start, want: "a value within the float32 range", rng: true}
	}
	return float32(v), i, nil
}

// parseUint parses digit+ at b[i:] as a sparse index (< 2^31).
func parseUint(b []byte, i int) (int64, int, *numErr) {
	d0 := i
	var v int64
	for i < len(b) && isDigit(b[i]) {
		if v <= 1<<31 {
			v = v*10 + int64(b[i]-'0')
		}
		i++
	}
	if i == d0 {
		return 0, i, &numErr{at: i, want: "a non-negative integer index"}
	}
	return v, i, nil
}
