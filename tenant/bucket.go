package tenant

import (
	"math"
	"time"
)

// bucket is a token bucket of capacity perMinute refilled at perMinute per minute. Its
// level may go below zero: a charge known only after the fact (an answer's tokens) is a
// debt the refill pays back.
type bucket struct {
	perMinute float64
	level     float64
	last      time.Time
}

func newBucket(perMinute int, now time.Time) bucket {
	return bucket{perMinute: float64(perMinute), level: float64(perMinute), last: now}
}

func (b *bucket) refill(now time.Time) {
	if dt := now.Sub(b.last); dt > 0 {
		b.level = math.Min(b.perMinute, b.level+b.perMinute*dt.Minutes())
		b.last = now
	}
}

// take removes n if the bucket holds n; else it returns how long until it will.
func (b *bucket) take(n float64, now time.Time) (ok bool, wait time.Duration) {
	b.refill(now)
	if b.level >= n {
		b.level -= n
		return true, 0
	}
	return false, b.until(n)
}

// solvent reports whether the bucket is out of debt; else how long until it is.
func (b *bucket) solvent(now time.Time) (ok bool, wait time.Duration) {
	b.refill(now)
	if b.level >= 0 {
		return true, 0
	}
	return false, b.until(0)
}

// charge removes n, going into debt if needed.
func (b *bucket) charge(n float64, now time.Time) {
	b.refill(now)
	b.level -= n
}

// until is the time the refill needs to bring the level to n.
func (b *bucket) until(n float64) time.Duration {
	return time.Duration(math.Ceil((n - b.level) / b.perMinute * float64(time.Minute)))
}
