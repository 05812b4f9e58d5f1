// Command retrieval measures how well tool search finds the right tool for a task put in
// a user's words.
//
//	go run ./bench/retrieval [-data DIR] [-v SEARCH] [-json FILE]
//	go run ./bench/retrieval -gen     # rewrite testdata/catalog.json from testdata/spec
//
// It has two catalogs. The development catalog (testdata/catalog.json, generated from
// testdata/spec/*.txt) has about 300 tools in the style MCP servers expose them: GitHub,
// GitLab, Linear, Jira, Slack, Discord, Gmail, Google Calendar and Drive, a file system,
// Postgres, MySQL, SQLite, web fetch and search, AWS, Google Cloud, Kubernetes, Notion,
// Stripe and more, with JSON schema parameters and their descriptions. The MCP catalog
// (testdata/mcp/*.json) is real: the tools/list of thirteen public MCP servers from npm,
// 146 tools, as the gateway's MCP client names and indexes them; testdata/mcp/README.md
// gives each server's package and version.
//
// A third, multilingual catalog is the MCP catalog plus five servers from npm that describe
// their tools in Chinese, English and Korean (testdata/mcp_cjk/*.json, 57 tools, their
// README giving each package and version): 203 tools. Its query sets, one per language
// (testdata/multilingual/{zh,ja,ko}.txt and en.txt), and its task set (testdata/tasks.txt:
// multi-step requests, each with the tools of each step) are development sets. Their
// queries were committed before any search ran on them and never edited (three English
// ones were later removed by the MCP set's overlap rule), but the CJK analysis (commit
// be59c1d) and the clause splitter (e0d4368) were written after seeing their results, and
// their commit messages quote the gains on them; toolsearch/task_test.go tests the
// splitter on tasks.txt's own requests, and toolsearch/task.go's Korean joins (뒤, verbs
// in -하고) are the ones its two Korean tasks use.
//
// The held-out multilingual sets (testdata/multilingual_heldout/*.txt and
// testdata/tasks_heldout.txt) were written afterwards from the tool lists alone, with
// toolsearch/ frozen (as of commit c34ca30), and committed (d7d9130) before any search ran
// on them. Their catalog is the multilingual one plus six more servers from npm
// (testdata/mcp_heldout/*.json, 155 tools, two described in Chinese and two in Japanese):
// 358 tools. No query asks for what a development, held-out, MCP or development
// multilingual query asks for. For both it reports recall@5, recall@10 and MRR@10 of plain
// BM25, the full lexical search and its default cut; a task's recall is the share of its
// steps with a tool in the first five or ten.
//
// The queries are tasks phrased the way people ask for them, each labelled with the tool
// or tools that do it; a query is answered when one of them is returned. There are three
// sets, reported apart:
//
//   - development (testdata/queries.txt): the search's defaults were tuned while looking
//     at its misses;
//   - held out (testdata/heldout.txt): written afterwards, on the same catalog; the
//     ranking was never tuned on it, but the relative score cut was chosen with its
//     figures in view;
//   - MCP servers (testdata/mcp_queries.txt): written from the MCP tool list before the
//     search was first run on it, less every query that asks for a task a development
//     or held-out query asks for; the ranking was frozen before the first run, the
//     relative score cut was chosen after it, with this set's empty results in view,
//     and so were the clause splitter's word minimums (e0d4368), so that no figure of
//     these three sets moved.
//
// The differences between them show how much of the figures is fitted to what was tuned.
//
// For each search configuration it reports recall@1 and recall@5 (the share of queries
// with a right tool first, or in the first five), MRR@10 (the mean of 1/rank of the first
// right tool in the first ten, 0 when none), and how many queries got no result or fewer
// than five, as Markdown tables:
//
//   - BM25 plain: textbook Okapi BM25 (k1 1.2, b 0.75) over all of a tool's text as one
//     field; no stemming, synonyms, field weights, name boost or namespace hints.
//   - lexical (full): the full lexical search (toolsearch.Options zero value), its
//     ranking alone, with no score cut.
//   - lexical, default cut: the same with the default score cut (SearchOptions.MinScore
//     zero): what the search returns with no configuration.
//   - lexical, min_score 0.1: the same with an absolute threshold of 0.1, the default
//     until the cut became relative.
//   - keyword: the weighted keyword scorer (name 3, keywords 2, description 1).
//   - lexical without stemming, synonyms, hints, name boost or field weights: one change
//     each, to show what each part contributes.
//
// Per catalog it also reports what each score cut does with the full lexical search: how
// many of the right answers found in the first ten without a cut it keeps, and how many
// off-topic requests (testdata/offtopic.txt) it leaves with no result. -v SEARCH lists the
// queries that configuration did not rank first. Results are exact and deterministic:
// the same figures on every run and machine.
package main
