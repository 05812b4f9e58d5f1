package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNamespaces_DotOrSharedUnderscorePrefix(t *testing.T) {
	c, err := New([]Tool{
		{Name: "git.commit"}, {Name: "git_status"}, {Name: "github_create_issue"},
		{Name: "github_list_issues"}, {Name: "send_email"}, {Name: "get_weather"},
		{Name: "get_time"}, {Name: "Slack_post"}, {Name: "slack_list"}, {Name: "fs.read"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"git.commit": "git", "git_status": "git", "github_create_issue": "github",
		"send_email": "", "get_weather": "", "Slack_post": "slack", "fs.read": "fs",
	}
	for name, ns := range want {
		if got := c.Namespace(name); got != ns {
			t.Errorf("Namespace(%s) = %q, want %q", name, got, ns)
		}
	}
	if got := c.Namespaces(); !cmp.Equal(got, []string{"fs", "git", "github", "slack"}) {
		t.Errorf("Namespaces = %v", got)
	}
	if got := c.InNamespace("GIT"); !cmp.Equal(got, []string{"git.commit", "git_status"}) {
		t.Errorf("InNamespace(git) = %v", got)
	}
	// A client tool can make a namespace of a lone profile prefix, for its request only.
	r, _ := c.WithClient([]Tool{{Name: "send_sms"}})
	if r.Namespace("send_email") != "" {
		t.Error("send is a verb, not a namespace")
	}
	r, _ = c.WithClient([]Tool{{Name: "fs_write"}, {Name: "weather_now"}})
	if got := r.InNamespace("fs"); !cmp.Equal(got, []string{"fs.read", "fs_write"}) {
		t.Errorf("request InNamespace(fs) = %v", got)
	}
	if c.Namespace("weather_now") != "" || r.Namespace("weather_now") != "" {
		t.Error("a lone prefix is not a namespace")
	}
}
