// Command retrieval measures how well tool search finds the right tool for a task put in
// a user's words.
//
//	go run ./bench/retrieval [-data DIR] [-v SEARCH] [-json FILE]
//	go run ./bench/retrieval -gen     # rewrite testdata/catalog.json from testdata/spec
//
// The catalog (testdata/catalog.json, generated from testdata/spec/*.txt) has about 300
// tools in the style MCP servers expose them: GitHub, GitLab, Linear, Jira, Slack,
// Discord, Gmail, Google Calendar and Drive, a file system, Postgres, MySQL, SQLite, web
// fetch and search, AWS, Google Cloud, Kubernetes, Notion, Stripe and more, with JSON
// schema parameters and their descriptions. The queries (testdata/queries.txt and
// testdata/heldout.txt) are tasks phrased the way people ask for them, each labelled with
// the tool or tools that do it; a query is answered when one of them is returned.
//
// queries.txt is the development set: the search's defaults were tuned while looking at
// its misses. heldout.txt was written afterwards and never tuned on; it is reported apart
// so the difference shows how much of the gain is fitted to the development set.
//
// For each search configuration it reports recall@1 and recall@5 (the share of queries
// with a right tool first, or in the first five) and MRR@10 (the mean of 1/rank of the
// first right tool in the first ten, 0 when none), as a Markdown table:
//
//   - BM25 plain: textbook Okapi BM25 (k1 1.2, b 0.75) over all of a tool's text as one
//     field; no stemming, synonyms, field weights, name boost or namespace hints.
//   - lexical: the full lexical search (toolsearch.Options zero value).
//   - keyword: the weighted keyword scorer (name 3, keywords 2, description 1).
//   - lexical without stemming, synonyms, hints or field weights: one change each, to
//     show what each part contributes.
//
// It also reports what the default min_score (0.1) does with the full lexical search: how
// many right answers it keeps, and how many off-topic requests (testdata/offtopic.txt) it
// leaves with no result. -v SEARCH lists the queries that configuration did not rank
// first. Results are exact and deterministic: the same figures on every run and machine.
package main
