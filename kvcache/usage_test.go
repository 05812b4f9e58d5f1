package kvcache

import (
	"fmt"
	"testing"
)

func TestAccount_ReportedThenEstimatedThenUnknown(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		prompt, reported, estimated int
		want                        Usage
	}{
		{"reported wins over an estimate", 1000, 600, 900, Usage{1000, 600, 400, SourceReported}},
		{"reported zero is a report", 1000, 0, 900, Usage{1000, 0, 1000, SourceReported}},
		{"estimate when nothing reported", 1000, NotKnown, 900, Usage{1000, 900, 100, SourceEstimated}},
		{"unknown: all computed, as an upper bound", 1000, NotKnown, NotKnown, Usage{1000, 0, 1000, SourceUnknown}},
		{"reported above prompt is clamped", 100, 130, NotKnown, Usage{100, 100, 0, SourceReported}},
		{"estimate above prompt is clamped", 100, -5, 101, Usage{100, 100, 0, SourceEstimated}},
		{"negative prompt counts as zero", -1, 10, NotKnown, Usage{0, 0, 0, SourceReported}},
	} {
		if got := Account(tc.prompt, tc.reported, tc.estimated); got != tc.want {
			t.Errorf("%s: Account(%d, %d, %d) = %+v, want %+v", tc.name, tc.prompt, tc.reported, tc.estimated, got, tc.want)
		}
	}
}

func ExampleAccount() {
	// llama.cpp /completion: timings.prompt_n = 120 computed, timings.cache_n = 17000.
	u := Account(120+17000, 17000, NotKnown)
	fmt.Printf("%d prompt, %d cached, %d computed (%s)\n", u.Prompt, u.Cached, u.Computed, u.Source)
	// Output: 17120 prompt, 17000 cached, 120 computed (reported)
}
