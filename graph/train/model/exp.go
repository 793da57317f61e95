package model

import "math"

// exp32 is e^x in float32 for the softmax loss: 2^n·2^f with n = round(x·log2 e)
// and a degree-6 polynomial for 2^f, f in [-1/2, 1/2]. The float32
// rounding of x·log2 e bounds the relative error: below 2e-6 for |x| <= 16,
// below 1e-5 over the whole range (TestExp32); 0 below -87, +Inf above 88.
func exp32(x float32) float32 {
	switch {
	case x < -87:
		return 0
	case x > 88:
		return float32(math.Inf(1))
	}
	t := x * 1.4426950408889634
	n := float32(math.Floor(float64(t + 0.5)))
	f := (t - n) * 0.6931471805599453 // e^f = 2^(t-n)
	p := 1 + f*(1+f*(0.5+f*(1.0/6+f*(1.0/24+f*(1.0/120+f*(1.0/720))))))
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}
