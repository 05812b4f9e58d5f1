package masking

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// forRandomSpecs calls fn on n random Hermes specs over random catalogs
// (shared prefixes, names that are prefixes of others, 64-byte names,
// unicode; see catalog), with random loaded subsets, duplicates and modes.
// allowed is what the spec allows, deduplicated in spec order; disabled is
// the rest of the catalog.
func forRandomSpecs(t *testing.T, n int, fn func(t *testing.T, spec Spec, allowed, disabled []string)) {
	forRandomSpecsIn(t, Hermes(), n, fn)
}

// forRandomSpecsIn is forRandomSpecs in format f.
func forRandomSpecsIn(t *testing.T, f Format, n int, fn func(t *testing.T, spec Spec, allowed, disabled []string)) {
	r := rand.New(rand.NewPCG(6, 0x9b9f))
	for i := range n {
		names := catalog(r, 2+r.IntN(30))
		spec := Spec{Format: f, Mode: Mode(r.IntN(3))}
		for _, nm := range names {
			if r.IntN(3) == 0 {
				spec.Allowed = append(spec.Allowed, nm)
				if r.IntN(8) == 0 {
					spec.Allowed = append(spec.Allowed, nm)
				}
			}
		}
		if spec.Mode == ModeSpecified {
			pick := names[r.IntN(len(names))]
			spec.Namespace = pick[:1+r.IntN(len(pick))]
			if !strings.HasPrefix(pick, spec.Namespace) || spec.Namespace == "" {
				spec.Namespace = pick
			}
		}
		seen := map[string]bool{}
		var allowed, disabled []string
		for _, nm := range spec.Allowed {
			if !seen[nm] && (spec.Mode != ModeSpecified || strings.HasPrefix(nm, spec.Namespace)) {
				seen[nm] = true
				allowed = append(allowed, nm)
			}
		}
		if spec.Mode != ModeAuto && len(allowed) == 0 {
			continue // an error by design, tested on its own
		}
		for _, nm := range names {
			if !seen[nm] {
				disabled = append(disabled, nm)
			}
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { fn(t, spec, allowed, disabled) })
	}
}
