// Package doclinks holds the documentation to its shape: README.md stays the front door
// (at most 300 lines, its Test section naming the test command .ci/run runs), and every
// relative link in README.md and docs/*.md reaches a file of the repository, and a
// heading of that file where the link names an anchor; and docs/configuration.md names
// every key the config file takes, as a key (in backticks, or YAML's key:), not a word
// of prose; and no non-test .go file of the repository passes 500
// lines (filesize_test.go, with a shrinking allow-list of files in gateway/ that await their
// split). It has no code of its own; its tests read the pages and the source.
package doclinks
