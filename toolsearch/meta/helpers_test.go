package meta

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/maskgate/maskgate/toolsearch"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or writes it there with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs (-want +got); run go test -update if the change is meant:\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// testTools is a small catalog with two namespaces and a few loose tools.
var testTools = []toolsearch.Tool{
	{Name: "git.commit", Description: "Record staged changes in the repository with a message.", Parameters: []byte(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
	{Name: "git.push", Description: "Push local commits to the remote branch."},
	{Name: "git.status", Description: "Show the working tree status."},
	{Name: "github_create_issue", Description: "Create a new issue in a GitHub repository. Needs a title."},
	{Name: "github_list_issues", Description: "List the open issues of a GitHub repository."},
	{Name: "send_email", Description: "Send an email to one or more recipients.", Keywords: []string{"mail", "gmail"}},
	{Name: "get_weather", Description: "Get the current weather for a city."},
	{Name: "slack_post_message", Description: "Post a message to a Slack channel."},
	{Name: "slack_list_channels", Description: "List the channels of a Slack workspace."},
	{Name: "db_query", Description: "Run a read-only SQL query against the analytics database & return rows <as JSON>."},
}

func testIndex(t testing.TB) *toolsearch.Index {
	t.Helper()
	c, err := toolsearch.New(testTools)
	if err != nil {
		t.Fatal(err)
	}
	return toolsearch.NewIndex(c, toolsearch.Options{})
}

// testEnv is an Env over the test catalog with loaded as the loaded set.
func testEnv(t testing.TB, loaded ...string) Env {
	ix := testIndex(t)
	set := map[string]bool{}
	for _, n := range loaded {
		set[n] = true
	}
	return Env{
		Searcher: IndexSearcher{Index: ix},
		Names:    ix.Catalog(),
		Loaded:   func(n string) bool { return set[n] },
	}
}
