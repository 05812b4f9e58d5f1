//go:build !race

package gateway

const recycleBodies = true

const poisonByte = 0 // unused: bodies are recycled
