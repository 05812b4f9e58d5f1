package toolsearch

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// MaxSummaryBytes bounds a tool's line in the catalog's index: its summary is cut at a
// word boundary before this many bytes and ends in "…".
const MaxSummaryBytes = 120

// Summary is the one line the catalog's index shows for a tool described by description:
// its first sentence (up to the first ". ", "。", newline or the end), whitespace collapsed,
// cut to MaxSummaryBytes at a word boundary. "" for an empty description.
func Summary(description string) string {
	s := description
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	for _, end := range []string{". ", "! ", "? ", "。", "！", "？"} {
		if i := strings.Index(s, end); i >= 0 {
			s = s[:i+len(strings.TrimRight(end, " "))]
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxSummaryBytes {
		return s
	}
	cut := MaxSummaryBytes - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexFunc(s[:cut], unicode.IsSpace); sp > cut/2 {
		cut = sp
	}
	return strings.TrimRightFunc(s[:cut], func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}

// indexText is a catalog's index, built once per variant.
type indexText struct {
	once     sync.Once
	text, id string
}

// IndexText is the catalog's compact index, for strategy index: one line per tool, its
// name and its summary (Tool.Summary where a profile set one, else Summary of its
// description), grouped by namespace. Groups come in the order of their first tool in
// the catalog, tools within a group in catalog order, tools without a namespace last;
// so the text, like Render, depends only on the tools and is the same on every call.
// withClient false leaves out the tools the request's client sent (those the engine sees
// whole, as callable). id is the hex SHA-256 of text.
func (c *Catalog) IndexText(withClient bool) (text, id string) {
	x := &c.indexTexts[0]
	if withClient {
		x = &c.indexTexts[1]
	}
	x.once.Do(func() {
		x.text = c.buildIndex(withClient)
		sum := sha256.Sum256([]byte(x.text))
		x.id = hex.EncodeToString(sum[:])
	})
	return x.text, x.id
}

func (c *Catalog) buildIndex(withClient bool) string {
	var order []string
	groups := map[string][]*Tool{}
	for _, t := range c.tools {
		if t.Source == FromClient && !withClient {
			continue
		}
		ns := c.ns.of(t.Name)
		if _, ok := groups[ns]; !ok && ns != "" {
			order = append(order, ns)
		}
		groups[ns] = append(groups[ns], t)
	}
	if len(groups[""]) > 0 {
		order = append(order, "")
	}
	var b strings.Builder
	for _, ns := range order {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if ns == "" {
			b.WriteString("## other\n")
		} else {
			b.WriteString("## " + ns + "\n")
		}
		for _, t := range groups[ns] {
			sum := t.Summary
			if sum == "" {
				sum = Summary(t.Description)
			}
			b.WriteString("- " + t.Name)
			if sum != "" {
				b.WriteString(": " + sum)
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
