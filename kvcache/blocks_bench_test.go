package kvcache

import (
	"fmt"
	"testing"
)

// A 500-tool catalog is about 75k tokens (the H200 measurement's 500-tool prompt was
// 77,120 tokens, 2k of them conversation; see H200Llama8BSamples): one lookup and one
// insert per request over such a prompt.
const benchPromptTokens = 75_000

func benchPrompt(first int32) []int32 {
	p := make([]int32, benchPromptTokens)
	for i := range p {
		p[i] = first + int32(i%50_000)
	}
	return p
}

func BenchmarkBlockCache_LookupInsert75k(b *testing.B) {
	b.Run("hit", func(b *testing.B) { // the same prompt again: every block held
		c := NewBlockCache(BlockOptions{})
		p := benchPrompt(0)
		c.Insert("m", p)
		b.ReportAllocs()
		for b.Loop() {
			c.Lookup("m", p)
			c.Insert("m", p)
		}
	})
	b.Run("turn", func(b *testing.B) { // a cached 75k prefix plus 128 new tokens
		c := NewBlockCache(BlockOptions{})
		p := benchPrompt(0)
		c.Insert("m", p)
		p = append(p, make([]int32, 128)...)
		b.ReportAllocs()
		i := int32(0)
		for b.Loop() {
			i++
			for j := benchPromptTokens; j < len(p); j++ {
				p[j] = i
			}
			c.Lookup("m", p)
			c.Insert("m", p)
		}
	})
	b.Run("miss", func(b *testing.B) { // a new 75k prompt each time, evicting when full
		c := NewBlockCache(BlockOptions{CapacityBlocks: 4 * benchPromptTokens / DefaultBlockSize})
		prompts := make([][]int32, 8)
		for i := range prompts {
			prompts[i] = benchPrompt(int32(1_000_000 * (i + 1)))
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p := prompts[i%len(prompts)]
			i++
			c.Lookup("m", p)
			c.Insert("m", p)
		}
	})
}

func ExampleBlockCache() {
	c := NewBlockCache(BlockOptions{BlockSize: 4})
	system := []int32{1, 2, 3, 4, 5, 6, 7, 8} // the profile's system prompt and tools
	c.Insert("qwen", append(system, 10, 11, 12))
	// Another thread of the profile: the system prompt is cached, its own turn is not.
	next := append(system, 20, 21, 22, 23, 24)
	fmt.Println(c.Lookup("qwen", next), "of", len(next), "tokens cached")
	// Output: 8 of 13 tokens cached
}
