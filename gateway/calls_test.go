package gateway_test

import (
	"regexp"
	"slices"
	"strings"
)

// callName finds a called name in text; a call cut off by max_tokens inside its name
// leaves it unclosed.
var callName = regexp.MustCompile(`"name"\s*:\s*"([^"]*)("?)`)

// namesInText returns the names of the calls written in text (an answer whose call could
// not be parsed, e.g. cut off by max_tokens), an unclosed one with a trailing "…".
func namesInText(text string) []string {
	var out []string
	for _, sub := range callName.FindAllStringSubmatch(text, -1) {
		if sub[2] == "" {
			sub[1] += "…"
		}
		out = append(out, sub[1])
	}
	return out
}

// allowedCall reports whether n is an allowed name or, cut off ("…"), the start of one.
func allowedCall(allowed []string, n string) bool {
	if cut, ok := strings.CutSuffix(n, "…"); ok {
		for _, a := range allowed {
			if strings.HasPrefix(a, cut) {
				return true
			}
		}
		return false
	}
	return slices.Contains(allowed, n)
}
