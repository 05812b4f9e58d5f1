// Package nodetest gives Go tests a Node.js with a folder's pinned npm
// packages installed: the official openai SDK the gateway is checked
// against, and xgrammar's WASM build that checks structural tags
// (internal/xgrammartest).
//
// It owns one step: `npm ci` in the folder, under a lock, when
// node_modules is missing or older than package-lock.json, so that the
// packages of `go test ./...`, which run in parallel processes, never
// install into the same node_modules at once. The lock file pins every
// version; nothing is resolved at test time.
//
// It must never skip: a test that cannot get node or its packages fails,
// naming the command that fixes it. It holds no package-level state and
// reads no environment variables beyond PATH.
package nodetest
