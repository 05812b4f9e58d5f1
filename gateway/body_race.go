//go:build race

package gateway

// Race builds never recycle a request's buffer: it is poisoned and dropped, so a slice of
// a body kept past its request reads poisonByte (see bodyReader).
const recycleBodies = false

const poisonByte = 0xA5
