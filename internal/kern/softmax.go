package kern

import "math"

// Softmax replaces x by its softmax, x[i] = exp(x[i]-max) / Σ_j exp(x[j]-max),
// and returns the log-sum-exp log Σ_j exp(x[j]): what a softmax loss needs
// for one row of scores (the loss of the true candidate t is lse - x[t]
// before the call, and the gradient of the loss is the new x minus one at
// t). An entry of -Inf (a masked candidate) gets exactly 0. Entries more
// than 87.3 below the largest (e^-87.3 is float32's smallest normal) get 0.
//
// Special rows: an empty x returns -Inf; a row of -Inf only is set to NaN
// and returns -Inf; a row with a NaN or +Inf is set to NaN and returns NaN.
func Softmax(x []float32) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	return active.softmax(x)
}

// Scale multiplies x[i] by alpha for i < len(x).
func Scale(alpha float32, x []float32) { active.scale(alpha, x) }

// softmaxWith is Softmax from an implementation's three passes: the
// maximum, exp(x[i]-m) in place with its sum (and the sum of x[i]-m, NaN
// when an input is), and scaling by 1/sum.
func softmaxWith(x []float32, maxf func([]float32) float32, exps func([]float32, float32) (sum, check float32), scale func(float32, []float32)) float32 {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	m := maxf(x) // a NaN may be dropped here, but not by exps' check
	if math.IsInf(float64(m), -1) {
		nan := false
		for _, v := range x {
			nan = nan || v != v
		}
		fillNaN(x)
		if nan {
			return float32(math.NaN())
		}
		return m
	}
	sum, check := exps(x, m)
	if check != check || math.IsInf(float64(m), 1) {
		fillNaN(x)
		return float32(math.NaN())
	}
	scale(1/sum, x)
	return m + float32(math.Log(float64(sum)))
}

func fillNaN(x []float32) {
	nan := float32(math.NaN())
	for i := range x {
		x[i] = nan
	}
}

// softmaxRef is the definition in float64.
func softmaxRef(x []float32) float32 {
	m := math.Inf(-1)
	if len(x) == 0 {
		return float32(m)
	}
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	if math.IsInf(m, -1) {
		fillNaN(x)
		return float32(m)
	}
	if math.IsNaN(m) || math.IsInf(m, 1) {
		fillNaN(x)
		return float32(math.NaN())
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - m)
	}
	for i, v := range x {
		x[i] = float32(math.Exp(float64(v)-m) / sum)
	}
	return float32(m + math.Log(sum))
}

func scaleRef(alpha float32, x []float32) {
	for i := range x {
		x[i] *= alpha
	}
}
