package vector

import (
	"math/rand"
	"testing"
)

// dotLoop is the plain Go loop, unrolled by eight with independent accumulators, that Dot is compared with.
func dotLoop(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}

func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	x, y := randomUnit(r, benchDim, nil, 0), randomUnit(r, benchDim, nil, 0)
	b.Run("vek32", func(b *testing.B) {
		for b.Loop() {
			Dot(x, y)
		}
	})
	b.Run("unrolled-go", func(b *testing.B) {
		for b.Loop() {
			dotLoop(x, y)
		}
	})
}
