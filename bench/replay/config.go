package main

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/maskgate/maskgate/bench/replay/workload"
	"github.com/maskgate/maskgate/gateway"
)

// Targets: what answers the gateway.
const (
	// TargetModel is kvcache's block prefix model behind a deterministic renderer: no
	// engine, token counts from o200k_base, times from kvcache's cost model.
	TargetModel = "model"
	// TargetEmbedded is llama.cpp in-process on the tiny random-weight model (llamacpp
	// builds only): a real engine with exact cached-token counts; its times mean nothing
	// for real models.
	TargetEmbedded = "embedded"
	// TargetURL is a running engine or API at -url, through the repository's backend
	// for -kind: times count.
	TargetURL = "url"
)

// Scenarios.
const (
	// ScenarioFresh is one session on a cold engine.
	ScenarioFresh = "fresh"
	// ScenarioProfile is Sessions sessions of one profile, one after another.
	ScenarioProfile = "profile"
	// ScenarioConcurrent is the same sessions, Concurrency at a time.
	ScenarioConcurrent = "concurrent"
	// ScenarioLong is one session of LongTurns turns.
	ScenarioLong = "long"
)

// Config is one replay. The zero value of each field is its default.
type Config struct {
	// Target is TargetModel (the default), TargetEmbedded or TargetURL.
	Target string
	// Catalogs are the catalog sizes, in tools. If empty, 20, 100 and 500 on the prefix
	// model, 20 on an engine.
	Catalogs []int
	// Scenarios to run. If empty, fresh, profile and long.
	Scenarios []string
	// Strategies to run, as gateway.Options.Strategy. If empty, all seven.
	Strategies []string
	// Sessions is the number of sessions in the profile scenarios. If zero, 10.
	Sessions int
	// Turns is the turns of a session. If zero, 20.
	Turns int
	// LongTurns is the turns of the long scenario's session. If zero, 80.
	LongTurns int
	// Concurrency is how many sessions run at once in the concurrent scenario. If zero, 4.
	Concurrency int
	// Seed picks the catalog and the sessions.
	Seed uint64
	// Stray is the share of tasks whose tool the model calls before loading it when it
	// can see it (workload.Model.Stray). Negative means 0; zero means 0.25.
	Stray float64
	// BlockSize is the prefix model's block size in tokens. If zero, 16 (vLLM's).
	BlockSize int
	// Unconstrained makes the prefix model an engine that cannot enforce an allowed set
	// (mask then becomes validate, index and auto remove).
	Unconstrained bool
	// Context is the prefix model's context window in tokens, as auto's cost model is
	// told it (kvcache.Engine.ContextTokens): a strategy whose session outgrows it is
	// not weighed. Zero: none. The prefix model itself truncates nothing.
	Context int
	// Progressive makes the gateway load the top results of a search for each new user
	// message itself (gateway.Options.Progressive) instead of waiting for load_tool.
	Progressive bool
	// Paste is the words of pasted context (a log excerpt, different in every message)
	// each user message carries after its task. Zero: none.
	Paste int
	// Gen is the output tokens an engine target decodes per round before the scripted
	// reply replaces them. If zero, 16.
	Gen int
	// URL, Kind, Model and APIKey reach the engine of TargetURL: its base URL as that
	// engine's clients write it, its kind (vllm, llamacpp, openai, sglang, ollama), the
	// model name it serves, and a key for it (empty sends none).
	URL, Kind, Model, APIKey string
	// GGUF is the model file of TargetEmbedded. If empty, the tiny random-weight model,
	// generated into the user cache directory on first use.
	GGUF string
	// Slots and NumCtx configure the embedded engine. If zero, Concurrency+1 slots and
	// 32768 tokens each.
	Slots, NumCtx int
	// Threads is the embedded engine's CPU threads. Zero: one per core.
	Threads int
	// Progress receives a line per run. If nil, nothing is written.
	Progress io.Writer
}

var allStrategies = []string{string(gateway.StrategyEager), string(gateway.StrategyRemove), string(gateway.StrategyMask),
	string(gateway.StrategyAllowedTools), string(gateway.StrategyValidate), string(gateway.StrategyIndex), string(gateway.StrategyAuto)}

func (c Config) withDefaults() Config {
	if c.Target == "" {
		c.Target = TargetModel
	}
	if len(c.Catalogs) == 0 {
		c.Catalogs = []int{20}
		if c.Target == TargetModel {
			c.Catalogs = []int{20, 100, 500}
		}
	}
	if len(c.Scenarios) == 0 {
		c.Scenarios = []string{ScenarioFresh, ScenarioProfile, ScenarioLong}
	}
	if len(c.Strategies) == 0 {
		c.Strategies = allStrategies
	}
	if c.Sessions == 0 {
		c.Sessions = 10
	}
	if c.Turns == 0 {
		c.Turns = 20
	}
	if c.LongTurns == 0 {
		c.LongTurns = 80
	}
	if c.Concurrency == 0 {
		c.Concurrency = 4
	}
	switch {
	case c.Stray < 0:
		c.Stray = 0
	case c.Stray == 0:
		c.Stray = 0.25
	}
	if c.BlockSize == 0 {
		c.BlockSize = 16
	}
	if c.Gen == 0 {
		c.Gen = 16
	}
	if c.Slots == 0 {
		c.Slots = c.Concurrency + 1
	}
	if c.NumCtx == 0 {
		c.NumCtx = 32768
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// validate names the flag at fault; c has its defaults.
func (c Config) validate() error {
	switch c.Target {
	case TargetModel, TargetEmbedded, TargetURL:
	default:
		return fmt.Errorf("-target %q: give model, embedded or url", c.Target)
	}
	for _, n := range c.Catalogs {
		if n < 1 || n > workload.MaxTools() {
			return fmt.Errorf("-catalogs: %d tools; give 1 to %d (under 20 the gateway does not manage tools)", n, workload.MaxTools())
		}
	}
	for _, s := range c.Scenarios {
		if !slices.Contains([]string{ScenarioFresh, ScenarioProfile, ScenarioConcurrent, ScenarioLong}, s) {
			return fmt.Errorf("-scenarios: %q; give fresh, profile, concurrent or long", s)
		}
	}
	for _, s := range c.Strategies {
		if !slices.Contains(allStrategies, s) {
			return fmt.Errorf("-strategies: %q; give %s", s, strings.Join(allStrategies, ", "))
		}
	}
	switch {
	case c.Sessions < 1 || c.Turns < 2 || c.LongTurns < 2 || c.Concurrency < 1:
		return fmt.Errorf("-sessions (%d), -turns (%d), -long-turns (%d) and -concurrency (%d): give at least 1, 2, 2 and 1", c.Sessions, c.Turns, c.LongTurns, c.Concurrency)
	case c.Context < 0:
		return fmt.Errorf("-context %d: give a number of tokens, 0 for none", c.Context)
	case c.Paste < 0:
		return fmt.Errorf("-paste %d: give a number of words, 0 for none", c.Paste)
	case c.Stray > 1:
		return fmt.Errorf("-stray %g: give a share from 0 to 1", c.Stray)
	case c.BlockSize < 1 || c.Gen < 1 || c.Slots < 1 || c.NumCtx < 16:
		return fmt.Errorf("-block-size (%d), -gen (%d), -slots (%d) and -ctx (%d) must be positive (ctx at least 16)", c.BlockSize, c.Gen, c.Slots, c.NumCtx)
	}
	if c.Target == TargetURL {
		if c.URL == "" || c.Model == "" {
			return fmt.Errorf("-target url needs -url (the engine's base URL) and -model (the name it serves)")
		}
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("-url %q: give an http(s) base URL, e.g. http://127.0.0.1:8000/v1 for vLLM", c.URL)
		}
		if !slices.Contains([]string{"vllm", "llamacpp", "openai", "sglang", "ollama"}, c.Kind) {
			return fmt.Errorf("-kind %q: give vllm, llamacpp, openai, sglang or ollama", c.Kind)
		}
	}
	return nil
}
