package workload

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/maskgate/maskgate/toolsearch"
)

// product is one namespace of the catalog: a product an agent reaches through tools,
// the things it holds, and a field that identifies where they live.
type product struct {
	ns, title, scope, scopeDesc string
	objects                     []string
}

// products are the namespaces tools are drawn from. Names use '_' only: every engine's
// tool-name rules accept [a-z0-9_].
var products = []product{
	{"github", "GitHub", "repo", "Repository as owner/name, e.g. acme/api.", []string{"issue", "pull_request", "branch", "release", "workflow_run", "review_comment", "label"}},
	{"gitlab", "GitLab", "project", "Project path, e.g. platform/billing.", []string{"merge_request", "issue", "pipeline", "tag", "snippet"}},
	{"jira", "Jira", "project_key", "Project key, e.g. OPS.", []string{"issue", "sprint", "epic", "comment", "worklog"}},
	{"linear", "Linear", "team", "Team key, e.g. ENG.", []string{"issue", "cycle", "project", "comment"}},
	{"slack", "Slack", "workspace", "Workspace domain, e.g. acme.slack.com.", []string{"message", "channel", "reminder", "user_group", "bookmark"}},
	{"gmail", "Gmail", "mailbox", "Mailbox address the agent acts for.", []string{"message", "draft", "label", "thread", "filter"}},
	{"calendar", "Google Calendar", "calendar_id", "Calendar id, or primary.", []string{"event", "attendee", "calendar", "free_busy_slot"}},
	{"drive", "Google Drive", "drive_id", "Shared drive id, or my-drive.", []string{"file", "folder", "permission", "revision"}},
	{"fs", "the local file system", "root", "Directory the tool may touch, e.g. /srv/data.", []string{"file", "directory", "symlink", "archive"}},
	{"postgres", "PostgreSQL", "database", "Database name from the configured connections.", []string{"table", "row", "index", "query_plan", "role"}},
	{"s3", "Amazon S3", "bucket", "Bucket name, e.g. acme-logs.", []string{"object", "bucket_policy", "lifecycle_rule", "multipart_upload"}},
	{"stripe", "Stripe", "account", "Connected account id, or platform.", []string{"customer", "invoice", "refund", "subscription", "payment_intent"}},
	{"notion", "Notion", "workspace", "Workspace name.", []string{"page", "database", "block", "comment"}},
	{"k8s", "Kubernetes", "cluster", "Cluster context name from the kubeconfig.", []string{"pod", "deployment", "service", "config_map", "job"}},
	{"docker", "Docker", "host", "Docker host, e.g. unix:///var/run/docker.sock.", []string{"container", "image", "volume", "network"}},
	{"sentry", "Sentry", "organization", "Organization slug.", []string{"issue", "event", "release", "alert_rule"}},
	{"datadog", "Datadog", "site", "Datadog site, e.g. datadoghq.eu.", []string{"monitor", "dashboard", "log_query", "incident", "slo"}},
	{"pagerduty", "PagerDuty", "service", "Service id.", []string{"incident", "schedule", "escalation_policy", "on_call_shift"}},
	{"zendesk", "Zendesk", "subdomain", "Zendesk subdomain, e.g. acme.", []string{"ticket", "macro", "user", "article"}},
	{"hubspot", "HubSpot", "portal", "Portal id.", []string{"contact", "deal", "company", "note"}},
	{"salesforce", "Salesforce", "org", "Org alias from the configured logins.", []string{"opportunity", "account", "lead", "case", "report"}},
	{"twilio", "Twilio", "account_sid", "Account SID.", []string{"sms", "call", "phone_number"}},
	{"figma", "Figma", "team", "Team id.", []string{"file", "comment", "component", "version"}},
	{"confluence", "Confluence", "space", "Space key, e.g. DOCS.", []string{"page", "blog_post", "attachment", "comment"}},
	{"bigquery", "BigQuery", "project_id", "Google Cloud project id.", []string{"dataset", "table", "query_job", "view"}},
	{"redis", "Redis", "instance", "Instance name from the configured connections.", []string{"key", "stream", "hash"}},
	{"shopify", "Shopify", "shop", "Shop domain, e.g. acme.myshopify.com.", []string{"order", "product", "customer", "discount_code", "fulfillment"}},
	{"asana", "Asana", "workspace", "Workspace gid.", []string{"task", "project", "section", "story"}},
}

// verb is one kind of operation, with what it says and the parameters it takes.
type verb struct {
	name, does string
	params     func(p product, obj string) []param
}

type param struct {
	name, typ, desc string
	enum            []string
	required        bool
}

func idParam(obj string) param {
	return param{name: obj + "_id", typ: "string", desc: "Id of the " + words(obj) + ", as returned by the list or search tools.", required: true}
}

var verbs = []verb{
	{"create", "Creates a new %s in %s and returns it with its id and URL.", func(p product, obj string) []param {
		return []param{
			{name: "title", typ: "string", desc: "Short title or name of the new " + words(obj) + ".", required: true},
			{name: "body", typ: "string", desc: "Longer text in Markdown; optional."},
			{name: "assignee", typ: "string", desc: "User name or email to assign; empty leaves it unassigned."},
			{name: "labels", typ: "array", desc: "Labels or tags to attach."},
		}
	}},
	{"get", "Gets one %s from %s by id, with all its fields.", func(p product, obj string) []param {
		return []param{idParam(obj), {name: "include", typ: "array", desc: "Related records to embed, e.g. comments, history."}}
	}},
	{"list", "Lists %s records in %s, newest first, one page at a time.", func(p product, obj string) []param {
		return []param{
			{name: "state", typ: "string", desc: "Only records in this state.", enum: []string{"open", "closed", "all"}},
			{name: "updated_since", typ: "string", desc: "ISO 8601 time; only records changed after it."},
			{name: "limit", typ: "integer", desc: "Page size, 1 to 100; default 25."},
			{name: "cursor", typ: "string", desc: "Cursor from the previous page; empty for the first."},
		}
	}},
	{"update", "Updates fields of an existing %s in %s; fields left out keep their values.", func(p product, obj string) []param {
		return []param{
			idParam(obj),
			{name: "title", typ: "string", desc: "New title or name."},
			{name: "state", typ: "string", desc: "New state.", enum: []string{"open", "closed"}},
			{name: "fields", typ: "object", desc: "Other fields to change, by API field name."},
		}
	}},
	{"delete", "Deletes a %s from %s. This cannot be undone; ask the user first.", func(p product, obj string) []param {
		return []param{idParam(obj), {name: "confirm", typ: "boolean", desc: "Must be true: the user agreed to delete it.", required: true}}
	}},
	{"search", "Searches %s records in %s by text and filters; returns the best matches with ids.", func(p product, obj string) []param {
		return []param{
			{name: "query", typ: "string", desc: "Words to match in titles and text.", required: true},
			{name: "author", typ: "string", desc: "Only records created by this user."},
			{name: "limit", typ: "integer", desc: "Most results to return, 1 to 50; default 10."},
		}
	}},
	{"export", "Exports %s records from %s as CSV or JSON to a file the user can download.", func(p product, obj string) []param {
		return []param{
			{name: "format", typ: "string", desc: "File format.", enum: []string{"csv", "json"}, required: true},
			{name: "filter", typ: "string", desc: "Filter expression in the product's own search syntax."},
			{name: "columns", typ: "array", desc: "Fields to include; all when empty."},
		}
	}},
	{"comment_on", "Adds a comment to a %s in %s and notifies its watchers.", func(p product, obj string) []param {
		return []param{idParam(obj), {name: "text", typ: "string", desc: "Comment text in Markdown.", required: true}, {name: "internal", typ: "boolean", desc: "Visible to the team only."}}
	}},
}

// words turns a snake_case identifier into words: pull_request → pull request.
func words(s string) string { return strings.ReplaceAll(s, "_", " ") }

// ToolSpec is one generated tool: its name, where it lives, and what a task with it says.
type ToolSpec struct {
	Name, Namespace, Verb, Object, Product string
}

// CatalogOptions shape a generated catalog. The zero value of each field is its default.
type CatalogOptions struct {
	// Tools is the number of tools. If zero, 100. At most MaxTools.
	Tools int
	// Seed picks and orders the tools. Catalogs of one seed nest: the first n tools of a
	// larger catalog are the smaller one.
	Seed uint64
}

// MaxTools is the largest catalog the generator can make: every (product, object, verb).
func MaxTools() int {
	n := 0
	for _, p := range products {
		n += len(p.objects) * len(verbs)
	}
	return n
}

// Catalog is a generated tool catalog: the tools as an OpenAI tools array (compact,
// members in toolsearch's render order, so each tool reaches the prompt as these bytes;
// toolsearch orders the catalog its own way), and what each tool is for.
type Catalog struct {
	JSON  []byte
	Specs []ToolSpec
}

// NewCatalog generates a catalog: a pure function of o, byte for byte.
func NewCatalog(o CatalogOptions) (*Catalog, error) {
	if o.Tools == 0 {
		o.Tools = 100
	}
	if o.Tools < 0 || o.Tools > MaxTools() {
		return nil, fmt.Errorf("workload: %d tools; the generator makes 1 to %d", o.Tools, MaxTools())
	}
	type cand struct {
		p   product
		obj string
		v   verb
	}
	var all []cand
	for _, p := range products {
		for _, obj := range p.objects {
			for _, v := range verbs {
				all = append(all, cand{p, obj, v})
			}
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x7265706c6179)) // "replay"
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })

	c := &Catalog{}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, x := range all[:o.Tools] {
		if i > 0 {
			b.WriteByte(',')
		}
		name := x.p.ns + "_" + x.v.name + "_" + x.obj
		desc := fmt.Sprintf(x.v.does, words(x.obj), x.p.title) + " " + detail(x.p, x.obj, x.v.name)
		writeTool(&b, name, desc, append([]param{{name: x.p.scope, typ: "string", desc: x.p.scopeDesc, required: true}}, x.v.params(x.p, x.obj)...))
		c.Specs = append(c.Specs, ToolSpec{Name: name, Namespace: x.p.ns, Verb: x.v.name, Object: x.obj, Product: x.p.title})
	}
	b.WriteByte(']')
	c.JSON = b.Bytes()
	return c, nil
}

// detail is a second sentence that differs by product and verb, as real catalogs'
// descriptions do.
func detail(p product, obj, v string) string {
	switch v {
	case "list", "search", "export":
		return "Needs read access to " + p.title + "; results respect the caller's permissions."
	case "delete":
		return "Needs admin rights on the " + words(p.scope) + "."
	}
	return "Use it when the user asks to " + strings.ReplaceAll(v, "_", " ") + " a " + words(obj) + " in " + p.title + "."
}

// writeTool writes one OpenAI tool object the way toolsearch renders it: type, then
// function with name, description and parameters.
func writeTool(b *bytes.Buffer, name, desc string, params []param) {
	fmt.Fprintf(b, `{"type":"function","function":{"name":%q,"description":%q,"parameters":{"type":"object","properties":{`, name, desc)
	var req []string
	for i, p := range params {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `%q:{"type":%q,"description":%q`, p.name, p.typ, p.desc)
		if len(p.enum) > 0 {
			b.WriteString(`,"enum":[`)
			for j, e := range p.enum {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, "%q", e)
			}
			b.WriteByte(']')
		}
		if p.typ == "array" {
			b.WriteString(`,"items":{"type":"string"}`)
		}
		b.WriteByte('}')
		if p.required {
			req = append(req, p.name)
		}
	}
	b.WriteString(`},"required":[`)
	for i, r := range req {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%q", r)
	}
	b.WriteString(`]}}}`)
}

// Index parses the catalog into a search index for gateway.Options.Tools.
func (c *Catalog) Index() (*toolsearch.Index, error) {
	tools, err := toolsearch.ParseTools(c.JSON, "replay catalog")
	if err != nil {
		return nil, err
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		return nil, err
	}
	return toolsearch.NewIndex(cat, toolsearch.Options{}), nil
}
