package doclinks

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/maskgate/maskgate/config"
)

// root is the repository root, two folders up from this package.
var root = filepath.Join("..", "..")

// pages are README.md and every docs/*.md, as paths relative to root.
func pages(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	out := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rel)
	}
	return out
}

// link matches a Markdown link or image target: ](target) or ](target "title").
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// fence opens or closes a code block; links inside one are code, not links.
var fence = regexp.MustCompile("^\\s*(```|~~~)")

// links returns the link targets of a Markdown page outside code blocks and inline code.
func links(md string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range link.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`[^`]*`")

// anchors returns the anchors GitHub gives a page's headings: lower case, punctuation
// other than hyphens and underscores dropped, spaces as hyphens, and -1, -2… on repeats.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := Slug(text)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// Slug is GitHub's anchor for a heading's text.
func Slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r), unicode.IsDigit(r):
			// GitHub keeps letters and digits of any script and drops other symbols (—, ×, …).
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug_AsGitHubWritesIt(t *testing.T) {
	for text, want := range map[string]string{
		"Tools: search and lazy loading":                          "tools-search-and-lazy-loading",
		"Responses, Messages and the WebSocket mode":              "responses-messages-and-the-websocket-mode",
		"Strategies replayed on a prefix model and a real engine": "strategies-replayed-on-a-prefix-model-and-a-real-engine",
		"Engines on CPU (the test fixture)":                       "engines-on-cpu-the-test-fixture",
		"`routing.hint_header` — who reads it":                    "routinghint_header--who-reads-it",
	} {
		if got := Slug(text); got != want {
			t.Errorf("Slug(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestDocs_EveryRelativeLinkResolves: every link in README.md and docs/*.md that is not a
// URL reaches an existing file or folder, and a heading of it where it names an anchor.
func TestDocs_EveryRelativeLinkResolves(t *testing.T) {
	checked := 0
	for _, page := range pages(t) {
		body, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(body)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := filepath.Join(root, page) // a bare #anchor is the page itself
			if file != "" {
				dest = filepath.Join(root, filepath.Dir(page), file)
			}
			checked++
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			md, err := os.ReadFile(dest)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(md))[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", page, target, file, anchor)
			}
		}
	}
	if checked < 15 {
		t.Errorf("checked %d relative links; README.md's map of docs/ alone has more", checked)
	}
}

// TestREADME_IsTheFrontDoor: README.md stays at most 300 lines, and its Test section
// opens with the command .ci/run runs ("the README's test command").
func TestREADME_IsTheFrontDoor(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(body), "\n"); n > 300 {
		t.Errorf("README.md has %d lines; at most 300: move detail into docs/", n)
	}
	_, test, ok := strings.Cut(string(body), "\n## Test\n")
	if !ok {
		t.Fatal("README.md has no ## Test section")
	}
	if !strings.HasPrefix(strings.TrimLeft(test, "\n"), "```sh\nscripts/test\n```") {
		t.Errorf("README.md's Test section does not open with the command block scripts/test")
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^exec scripts/test$`).Match(ci) {
		t.Errorf(".ci/run does not exec scripts/test, the README's test command")
	}
}

// yamlKeys returns every key name of t's yaml tags, and of the structs it holds.
func yamlKeys(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = true
		yamlKeys(f.Type, seen, out)
	}
}

// TestConfigurationPage_NamesEveryKey: docs/configuration.md names every key the config
// file takes (config.Config's yaml tags, nested ones included), so a new key comes with
// its documentation.
func TestConfigurationPage_NamesEveryKey(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root, "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	yamlKeys(reflect.TypeFor[config.Config](), map[reflect.Type]bool{}, keys)
	if len(keys) < 50 {
		t.Fatalf("found %d config keys; the walk over config.Config's yaml tags is broken", len(keys))
	}
	named := namedKeys(string(page))
	for k := range keys {
		if !named(k) {
			t.Errorf("docs/configuration.md does not name the key %s as a key (in backticks, or as `%s:` in YAML): document it (default, and what a bad value gets)", k, k)
		}
	}
}

// namedKeys reads a page for the config keys it names as keys, and returns whether it
// names key. A key counts where it is written as one: a word of an inline code span
// (`url`, `backends[].url`, `{name: a, url: …}`), `key:` anywhere in a code block (the
// config's YAML, its commented-out lines included), or `key:` at the start of a prose
// line. The same word in prose ("the url of a backend", "max_queue: 3" mid-sentence) or
// in a code block without its colon does not.
func namedKeys(md string) func(key string) bool {
	var spans, block, prose []string
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		switch {
		case fence.MatchString(line):
			inFence = !inFence
		case inFence:
			block = append(block, line)
		default:
			spans = append(spans, inlineCode.FindAllString(line, -1)...)
			prose = append(prose, line)
		}
	}
	code, blocks, lines := strings.Join(spans, "\n"), strings.Join(block, "\n"), strings.Join(prose, "\n")
	return func(key string) bool {
		k := regexp.QuoteMeta(key)
		return regexp.MustCompile(`\b`+k+`\b`).MatchString(code) ||
			regexp.MustCompile(`(?:^|[^\w.])`+k+`:(?:\s|$)`).MatchString(blocks) ||
			regexp.MustCompile(`(?m)^[ \t]*(?:- )?`+k+`:(?:\s|$)`).MatchString(lines)
	}
}

// TestNamedKeys_OnlyAsKeys: a key mentioned in prose is not named; in backticks, as
// YAML's `key:` in a block or at a line's start, or in a flow mapping, it is.
func TestNamedKeys_OnlyAsKeys(t *testing.T) {
	page := "Each backend has a url and a timeout, and eager_below in prose.\n" +
		"Set `read_header_timeout` or `search.eager_below`; `{name: a, models: [m]}`.\n" +
		"```yaml\nbackends:\n  - name: a\n    kind: vllm\n    urls: [x, y]   # or headers, env\n" +
		"server: {body_timeout: 5s, min_body_rate: 1KiB}\n  # data_dir: /var   # or key_hash: x\n```\n" +
		"queue_timeout: 2s\n" +
		"Prose, max_queue: 3 is not a key.\n"
	named := namedKeys(page)
	for key, want := range map[string]bool{
		"url": false, "timeout": false, // prose only ("urls:" is another key)
		"headers": false, "env": false, // in a block's comment, without a colon
		"eager_below":         true, // in backticks, as part of a path
		"read_header_timeout": true, // in backticks
		"name":                true, // in a flow mapping in backticks
		"models":              true,
		"backends":            true, // YAML in a block
		"kind":                true,
		"urls":                true,
		"body_timeout":        true, // a flow mapping in a block
		"min_body_rate":       true,
		"data_dir":            true,  // a commented-out line of a block
		"key_hash":            true,  // `key:` in a block's comment
		"queue_timeout":       true,  // `key:` at a line's start
		"max_queue":           false, // a comma before it, in prose
		"server":              true,
	} {
		if got := named(key); got != want {
			t.Errorf("named(%q) = %v, want %v", key, got, want)
		}
	}
}
