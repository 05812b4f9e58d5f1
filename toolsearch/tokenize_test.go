package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize_SplitsNamesAndProseAlike(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"github_create_issue", []string{"github", "create", "issue"}},
		{"createIssue", []string{"create", "issue"}},
		{"CreateIssue", []string{"create", "issue"}},
		{"HTTPServer", []string{"http", "server"}},
		{"getHTTPResponseCode", []string{"get", "http", "response", "code"}},
		{"git.commit", []string{"git", "commit"}},
		{"brave-web-search", []string{"brave", "web", "search"}},
		{"mcp__github__list_prs", []string{"mcp", "github", "list", "prs"}},
		{"oauth2Token", []string{"oauth", "2", "token"}},
		{"base64", []string{"base", "64"}},
		{"getS3Object", []string{"get", "s3", "object"}},
		{"ec2 s3 k8s v2", []string{"ec2", "s3", "k8s", "v2"}},
		{"mySQL", []string{"my", "sql"}},
		{"  ", nil},
		{"日本語のテキスト", []string{"日本", "本語", "語の", "のテ", "テキ", "キス", "スト"}},
		{"Überweisung erstellen", []string{"überweisung", "erstellen"}},
		{"bad\xffutf8", []string{"bad", "utf", "8"}},
	}
	for _, c := range cases {
		if got := tokenize(nil, c.in); !cmp.Equal(got, c.want) {
			t.Errorf("tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTokenizeText_KeepsProductNamesWhole(t *testing.T) {
	got := tokenizeText(nil, "Create a GitHub issue in PagerDuty, then ping MySQL_admin!")
	want := []string{"create", "a", "github", "issue", "in", "pagerduty", "then", "ping", "mysql", "admin"}
	if !cmp.Equal(got, want) {
		t.Errorf("tokenizeText = %q, want %q", got, want)
	}
}

func TestWords_DropStopWordsAndNumbers(t *testing.T) {
	got := words(nil, "Please open an issue for the 404 on my page", tokenizeText)
	want := []string{"open", "issue", "page"}
	if !cmp.Equal(got, want) {
		t.Errorf("words = %q, want %q", got, want)
	}
}

func TestValues_ArgumentsBecomeTheirKind(t *testing.T) {
	cases := map[string]string{
		"email the contract to legal@acme.com":    "email the contract to email",
		"fetch https://example.com/pricing.":      "fetch url",
		"tell #deploys the build is out":          "tell channel the build is out",
		"ping @sam":                               "ping user",
		"move ENG-204 to done":                    "move issue to done",
		"what's inside config.yaml?":              "what's inside file",
		"open a PR from feature/search into main": "open a PR from  into main",
		"plain words stay":                        "plain words stay",
	}
	for in, want := range cases {
		if got := values(in); got != want {
			t.Errorf("values(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRewrite_IdiomsReplaceCompoundsAdd(t *testing.T) {
	cfg := Options{}.config()
	cases := map[string]string{
		"turn off the staging box": "stop the staging box",
		"set up a meeting":         "create a meeting",
		"open a merge request":     "open a merge request pr",
		"add a to do for me":       "add a to do issue for me",
		"nothing to rewrite here":  "nothing to rewrite here",
		"turn":                     "turn",
	}
	for in, want := range cases {
		got := cfg.rewrite(tokenizeText(nil, in))
		if !cmp.Equal(got, tokenizeText(nil, want)) {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}
