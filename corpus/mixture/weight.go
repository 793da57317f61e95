package mixture

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Weight is a corpus's share of a mixture as the user wrote it: a positive
// decimal (Num/Den, reduced), or with Samples an absolute count of samples
// per epoch (Num, Den = 1), which weighs the corpus Num / (sum of counts).
type Weight struct {
	Num, Den uint64
	Samples  bool
}

// String returns the form ParseWeight reads back to the same value.
func (w Weight) String() string {
	if w.Samples {
		return "samples:" + strconv.FormatUint(w.Num, 10)
	}
	if w.Den == 1 {
		return strconv.FormatUint(w.Num, 10)
	}
	return strconv.FormatUint(w.Num, 10) + "/" + strconv.FormatUint(w.Den, 10)
}

// Spec is one --mix argument: a corpus path and its weight.
type Spec struct {
	Path   string
	Weight Weight
}

// ErrWeight is wrapped by every weight and --mix parse error.
var ErrWeight = errors.New("mixture: bad weight")

// maxDigits bounds the digits of a decimal weight so that its numerator and
// denominator fit in 64 bits.
const maxDigits = 18

// ParseSpec reads "PATH=WEIGHT" (split at the last '=', so a path may hold
// one), WEIGHT as ParseWeight reads it.
func ParseSpec(arg string) (Spec, error) {
	i := strings.LastIndexByte(arg, '=')
	if i < 0 {
		return Spec{}, fmt.Errorf("--mix %q: %w: want CORPUS=WEIGHT (e.g. A.ctf=0.7 or A.ctf=samples:5000000)", arg, ErrWeight)
	}
	if i == 0 {
		return Spec{}, fmt.Errorf("--mix %q: %w: the corpus path is empty", arg, ErrWeight)
	}
	w, err := ParseWeight(arg[i+1:])
	if err != nil {
		return Spec{}, fmt.Errorf("--mix %q: %w", arg, err)
	}
	return Spec{Path: arg[:i], Weight: w}, nil
}

// ParseWeight reads a positive decimal weight ("0.7", "3", "12.5") or an
// absolute sample count per epoch ("samples:5000000"). Decimals are read
// exactly (no floating point), at most 18 digits.
func ParseWeight(s string) (Weight, error) {
	if rest, ok := strings.CutPrefix(s, "samples:"); ok {
		n, err := strconv.ParseUint(rest, 10, 64)
		if err != nil || n == 0 || !allDigits(rest) {
			return Weight{}, fmt.Errorf("%w %q: samples:N wants a positive integer N", ErrWeight, s)
		}
		return Weight{Num: n, Den: 1, Samples: true}, nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || !allDigits(whole) || !allDigits(frac) || (strings.Contains(s, ".") && frac == "") {
		return Weight{}, fmt.Errorf("%w %q: want a positive decimal such as 0.7, or samples:N", ErrWeight, s)
	}
	digits := strings.TrimLeft(whole+frac, "0")
	if len(digits) > maxDigits || len(frac) > maxDigits {
		return Weight{}, fmt.Errorf("%w %q: more than %d digits", ErrWeight, s, maxDigits)
	}
	num, _ := strconv.ParseUint("0"+digits, 10, 64)
	if num == 0 {
		return Weight{}, fmt.Errorf("%w %q: a weight must be > 0", ErrWeight, s)
	}
	den := uint64(1)
	for range len(frac) {
		den *= 10
	}
	g := gcd(num, den)
	return Weight{Num: num / g, Den: den / g}, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Integers turns weights into integer weights with the same ratios,
// reduced by their common divisor, whose sum fits in 64 bits: the form
// the mixture's arithmetic uses. All weights must be of one kind (all
// decimals or all sample counts): a count and a share do not compare.
func Integers(ws []Weight) ([]uint64, error) {
	if len(ws) == 0 {
		return nil, fmt.Errorf("%w: no corpora", ErrWeight)
	}
	lcm := uint64(1)
	for i, w := range ws {
		if w.Num == 0 || w.Den == 0 {
			return nil, fmt.Errorf("%w: corpus %d: weight %d/%d is not positive", ErrWeight, i, w.Num, w.Den)
		}
		if w.Samples != ws[0].Samples {
			return nil, fmt.Errorf("%w: corpus %d is weighted by %s and corpus 0 by %s: give every corpus a decimal weight or every corpus samples:N", ErrWeight, i, w, ws[0])
		}
		g := gcd(lcm, w.Den)
		hi, lo := bits.Mul64(lcm/g, w.Den)
		if hi != 0 {
			return nil, fmt.Errorf("%w: the weights' denominators are too far apart", ErrWeight)
		}
		lcm = lo
	}
	out := make([]uint64, len(ws))
	var g, sum uint64
	for i, w := range ws {
		hi, lo := bits.Mul64(w.Num, lcm/w.Den)
		if hi != 0 {
			return nil, fmt.Errorf("%w: corpus %d: weights %s and %s are too far apart to scale exactly", ErrWeight, i, w, ws[0])
		}
		out[i] = lo
		g = gcd(g, lo)
	}
	for i := range out {
		out[i] /= g
		var c uint64
		sum, c = bits.Add64(sum, out[i], 0)
		if c != 0 {
			return nil, fmt.Errorf("%w: the weights' sum does not fit in 64 bits once scaled to integers", ErrWeight)
		}
	}
	return out, nil
}
