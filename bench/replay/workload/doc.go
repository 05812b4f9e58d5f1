// Package workload is the synthetic agent work that bench/replay replays through the
// gateway: generated tool catalogs, scripted sessions (the client's side) and a scripted
// model (the engine's choices), all pure functions of their seeds.
//
// Catalogs are realistic OpenAI tool definitions of about 150 tokens each (o200k_base),
// named namespace_verb_object (github_create_issue, slack_list_channel, fs_get_file):
// '_' separators only, which every engine's tool-name rules accept. Each tool's bytes are
// those toolsearch renders, so a profile built from them prompts with exactly these bytes.
//
// A session is a sequence of tasks: a user message that names the tool it needs, then
// the tool's result. It discovers 3 to 8 tools as it goes. The scripted model decides
// every call from the request alone, as a model would, so that a run is deterministic on
// a random-weight model and identical across strategies and engines.
//
// It never talks to the network, reads no environment and holds no package state beyond
// constant tables.
package workload
