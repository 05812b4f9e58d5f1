package tinymodel

import "math"

// float16bits converts to IEEE 754 binary16 with round-to-nearest-even, the
// rounding numpy and ggml's own converter use, so a weight written here reads
// back as the value any other tool would have stored.
func float16bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff

	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 // quiet NaN
		}
		return sign | 0x7c00
	}

	e := exp - 127 + 15
	switch {
	case e >= 0x1f:
		return sign | 0x7c00 // too large: infinity
	case e <= 0:
		if e < -10 {
			return sign // below half the smallest subnormal: zero
		}
		// Subnormal half: shift the full significand (with its implicit
		// leading 1) right until its unit is 2^-24.
		m := mant | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		halfway := uint32(1) << (shift - 1)
		if rem > halfway || (rem == halfway && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}

	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	// A carry out of the mantissa correctly bumps the exponent (and becomes
	// infinity past the largest finite half).
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}
