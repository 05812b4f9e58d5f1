package toolsearch

// DefaultSynonyms returns the synonym groups used when Options.Synonyms is nil: the verbs
// and nouns that tool APIs and the people who call them spell differently ("file a
// ticket" for create_issue, "drop the table" for delete_table). Words in a group expand
// one another in a query, at Options.SynonymWeight; a word in several groups expands to
// all of them. An entry of several words is a phrase: in a query it stands for the group's
// first word ("turn off" → stop). Each call returns a fresh slice the caller may change.
func DefaultSynonyms() [][]string {
	return [][]string{
		// verbs
		{"create", "new", "add", "make", "open", "file", "insert", "generate", "submit", "raise", "register", "provision", "compose", "draft", "write", "report", "schedule", "book", "set up", "spin up", "sign up"},
		{"delete", "remove", "drop", "destroy", "erase", "purge", "trash", "discard", "rm", "unset", "wipe", "cancel", "get rid of"},
		{"send", "post", "notify", "message", "publish", "broadcast", "dm", "tell", "ping", "share", "announce", "email", "mail", "text"},
		{"list", "show", "enumerate", "display", "browse", "view"},
		{"get", "fetch", "retrieve", "read", "view", "show", "inspect", "describe", "cat", "print", "see", "check", "detail"},
		{"search", "find", "query", "lookup", "locate", "seek", "discover", "look up", "look for"},
		{"update", "edit", "modify", "change", "patch", "set", "alter", "amend", "rename", "adjust", "replace", "configure"},
		{"reschedule", "postpone", "delay", "update", "move", "push back"},
		{"run", "execute", "exec", "invoke", "trigger", "call", "launch", "perform", "kick off"},
		{"stop", "halt", "kill", "abort", "cancel", "shutdown", "pause", "suspend", "disable", "terminate", "turn off", "shut down", "switch off"},
		{"start", "resume", "enable", "boot", "launch", "turn on", "switch on", "boot up"},
		{"restart", "reboot", "bounce", "recycle", "reload", "redeploy"},
		{"close", "resolve", "complete", "finish", "done", "archive", "tick off", "check off"},
		{"acknowledge", "ack", "accept", "claim"},
		{"download", "save", "export", "pull"},
		{"upload", "import", "attach", "put", "push"},
		{"copy", "duplicate", "clone", "fork"},
		{"move", "transfer", "relocate", "migrate", "rename"},
		{"deploy", "release", "ship", "rollout", "publish"},
		{"rollback", "revert", "undo", "roll back", "go back"},
		{"assign", "delegate", "allocate", "reassign", "hand over"},
		{"invite", "add", "grant"},
		{"schedule", "book", "plan", "arrange", "set up"},
		{"reply", "respond", "answer"},
		{"summarize", "summary", "digest", "overview", "recap"},
		{"count", "total", "number", "stat", "statistic", "metric", "usage", "how many"},
		{"scale", "resize", "grow", "shrink", "replica"},
		{"refund", "reimburse", "reverse", "charge back"},
		{"merge", "combine", "squash"},
		{"approve", "accept", "review", "confirm", "lgtm"},
		{"reject", "deny", "decline", "refuse"},
		{"translate", "convert", "transform"},
		// nouns
		{"file", "document", "doc", "attachment"},
		{"issue", "ticket", "bug", "task", "defect", "problem", "todo", "to do"},
		{"email", "mail", "gmail", "inbox", "mailbox", "e mail"},
		{"message", "chat", "dm", "msg", "conversation", "thread", "post", "text", "sms"},
		{"event", "meeting", "calendar", "appointment", "invite", "invitation"},
		{"user", "member", "person", "people", "account", "teammate", "collaborator", "profile", "contact", "employee"},
		{"repository", "repo", "project", "codebase"},
		{"pr", "pull request", "mr", "merge request", "patch", "changeset"},
		{"comment", "reply", "note", "remark", "feedback"},
		{"folder", "directory", "dir"},
		{"database", "db", "datastore"},
		{"table", "collection", "relation", "sheet"},
		{"record", "row", "entry", "item"},
		{"query", "sql", "select"},
		{"website", "site", "page", "webpage", "url", "link", "web", "internet", "online"},
		{"instance", "vm", "server", "machine", "host", "node", "droplet", "box"},
		{"container", "pod", "docker"},
		{"bucket", "storage"},
		{"log", "logs", "trace", "audit"},
		{"image", "photo", "picture", "screenshot", "img"},
		{"label", "tag", "category"},
		{"payment", "charge", "transaction", "purchase", "pay"},
		{"customer", "client", "buyer", "subscriber"},
		{"invoice", "bill", "receipt"},
		{"subscription", "plan", "membership"},
		{"channel", "room", "space", "group"},
		{"branch", "ref"},
		{"secret", "credential", "password", "token", "key"},
		{"notification", "alert", "alarm"},
		{"permission", "role", "access", "acl", "policy"},
		{"environment", "env", "stage"},
		{"function", "lambda", "serverless"},
		{"cluster", "k8s", "kubernetes"},
		{"workflow", "pipeline", "action", "job", "build", "ci"},
		{"release", "version", "tag"},
		{"status", "state", "health"},
		{"content", "body", "text", "contents"},
		{"upcoming", "next", "future", "agenda"},
		{"recent", "latest", "last", "newest"},
		{"team", "organization", "org", "workspace", "company"},
		{"star", "favorite", "bookmark"},
		{"error", "exception", "failure", "crash", "fail"},
		{"forecast", "weather", "rain", "snow", "temperature", "precipitation", "wind", "sunny"},
		{"direction", "route", "navigate", "commute", "travel"},
		{"location", "place", "address", "coordinate"},
		{"cost", "spend", "bill", "price", "expense"},
	}
}

// DefaultAliases returns the product aliases used when Options.Aliases is nil: a query
// word that is a key names the namespace it maps to ("k8s" → kubernetes), if the catalog
// has that namespace. A namespace's own name needs no entry. Each call returns a fresh map.
func DefaultAliases() map[string]string {
	return map[string]string{
		"gh":         "github",
		"k8s":        "kubernetes",
		"kube":       "kubernetes",
		"kubectl":    "kubernetes",
		"postgresql": "postgres",
		"psql":       "postgres",
		"pg":         "postgres",
		"sqlite3":    "sqlite",
		"mariadb":    "mysql",
		"amazon":     "aws",
		"fs":         "filesystem",
	}
}
