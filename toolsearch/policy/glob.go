package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// compileGlob turns a glob into an anchored regular expression.
func compileGlob(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(g) {
				return nil, fmt.Errorf("glob %q ends with a lone '\\'", g)
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j == 0 { // "[]...]": a ']' first is literal
				k := strings.IndexByte(g[i+2:], ']')
				if k < 0 {
					j = -1
				} else {
					j = k + 1
				}
			}
			if j < 0 {
				return nil, fmt.Errorf("glob %q has an unclosed '['", g)
			}
			class := g[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			if class == "" || class == "^" {
				return nil, fmt.Errorf("glob %q has an empty class", g)
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("glob %q: %v", g, err)
	}
	return re, nil
}
