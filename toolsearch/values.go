package toolsearch

import (
	"strings"
	"unicode"
)

// Tasks name concrete things: "email legal@acme.com", "tell #deploys", "read config.yaml",
// "move ENG-204", "fetch https://example.com/pricing", "open a PR from feature/search".
// Their words say nothing about which tool to use ("search" in a branch name is not a
// search), but their shape says what kind of thing they are. values rewrites each such
// field of a query into the word for its kind, or drops it when the kind is unclear (a
// path without an extension: a repository, a branch).
func values(q string) string {
	fields := strings.Fields(q)
	changed := false
	for i, f := range fields {
		core := strings.TrimRight(f, ".,;:!?)'\"")
		core = strings.TrimLeft(core, "('\"")
		if kind, ok := valueKind(core); ok {
			fields[i] = kind
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(fields, " ")
}

// valueKind returns the word for the kind of value s is, "" to drop it, or false when s
// is a plain word.
func valueKind(s string) (string, bool) {
	switch {
	case len(s) < 2:
		return "", false
	case strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "www."):
		return "url", true
	case strings.Contains(s, "@") && !strings.HasPrefix(s, "@") && strings.Contains(s[strings.IndexByte(s, '@'):], "."):
		return "email", true
	case s[0] == '#' && isIdent(s[1:]):
		return "channel", true
	case s[0] == '@' && isIdent(s[1:]):
		return "user", true
	case issueKey(s):
		return "issue", true
	case fileName(s):
		return "file", true
	case strings.Contains(s, "/") && isIdent(strings.ReplaceAll(s, "/", "")):
		return "", true
	}
	return "", false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// issueKey matches keys such as PROJ-12 and ENG-204: capitals, a dash, digits.
func issueKey(s string) bool {
	i := strings.IndexByte(s, '-')
	if i < 2 || i == len(s)-1 {
		return false
	}
	for _, c := range []byte(s[:i]) {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	if s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, c := range []byte(s[i+1:]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// fileName matches a name or path ending in a common file extension.
func fileName(s string) bool {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 || !isIdent(strings.ReplaceAll(s, "/", "")) {
		return false
	}
	switch strings.ToLower(s[i+1:]) {
	case "md", "txt", "go", "py", "js", "ts", "tsx", "jsx", "json", "yaml", "yml", "toml",
		"ini", "conf", "cfg", "env", "csv", "tsv", "pdf", "doc", "docx", "xls", "xlsx",
		"ppt", "pptx", "log", "sql", "html", "css", "sh", "png", "jpg", "jpeg", "gif",
		"svg", "zip", "tar", "gz", "rs", "java", "rb", "c", "h", "cpp", "xml", "lock":
		return true
	}
	return false
}
