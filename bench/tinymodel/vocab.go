package tinymodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Where the Llama 3.2 byte-level BPE lives inside the Ollama module. It is
// read from the module cache, never copied into this repository.
const (
	ollamaModule       = "github.com/ollama/ollama"
	ollamaTokenizerDir = "tokenizer/testdata/llama3.2"
)

// Chat tokens appended after the BPE vocabulary, in this order. The ChatML
// markers are control tokens (an engine never prints them); the tool tags are
// user-defined tokens, as in Qwen 2.5 and Hermes models, so they are matched
// as one token in prompts and stay visible in generated text, where tool-call
// parsers look for them.
const (
	TokenEndOfText     = "<|endoftext|>"
	TokenIMStart       = "<|im_start|>"
	TokenIMEnd         = "<|im_end|>"
	TokenToolCall      = "<tool_call>"
	TokenToolCallEnd   = "</tool_call>"
	TokenTools         = "<tools>"
	TokenToolsEnd      = "</tools>"
	TokenToolResponse  = "<tool_response>"
	TokenToolResponseE = "</tool_response>"
)

// Token types, as llama.cpp's enum llama_token_type.
const (
	tokenTypeNormal      int32 = 1
	tokenTypeControl     int32 = 3
	tokenTypeUserDefined int32 = 4
)

// Vocab is a byte-level BPE vocabulary with the chat tokens appended.
type Vocab struct {
	Tokens []string // index is the token id
	Types  []int32  // llama_token_type per token
	Merges []string // "left right", highest priority first

	EndOfText uint32 // id of <|endoftext|>: BOS and padding
	IMEnd     uint32 // id of <|im_end|>: end of a turn, EOS and EOT
}

// ID returns the id of token text, or false if the vocabulary lacks it.
func (v *Vocab) ID(text string) (uint32, bool) {
	for i, t := range v.Tokens {
		if t == text {
			return uint32(i), true
		}
	}
	return 0, false
}

// OllamaTokenizerDir returns the folder holding encoder.json and vocab.bpe in
// the github.com/ollama/ollama module version that go.mod requires. It asks the
// go command, so it must run inside the maskgate module; it downloads the
// module when the cache lacks it.
func OllamaTokenizerDir(ctx context.Context) (string, error) {
	dir, err := goListDir(ctx)
	if err == nil && dir == "" {
		download := exec.CommandContext(ctx, "go", "mod", "download", ollamaModule)
		if out, err := download.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go mod download %s: %w: %s", ollamaModule, err, out)
		}
		dir, err = goListDir(ctx)
	}
	if err != nil {
		return "", err
	}
	if dir == "" {
		return "", fmt.Errorf("go list -m %s printed no folder; run inside the maskgate module", ollamaModule)
	}
	return filepath.Join(dir, ollamaTokenizerDir), nil
}

func goListDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", ollamaModule)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s (run inside the maskgate module): %w: %s", ollamaModule, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

// LoadVocab reads a GPT-2 style tokenizer (encoder.json: token to id;
// vocab.bpe: one merge per line) from dir and appends the chat tokens.
func LoadVocab(dir string) (*Vocab, error) {
	encoder, err := os.ReadFile(filepath.Join(dir, "encoder.json"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer vocabulary: %w", err)
	}
	var ids map[string]int32
	if err := json.Unmarshal(encoder, &ids); err != nil {
		return nil, fmt.Errorf("tokenizer vocabulary %s: %w", filepath.Join(dir, "encoder.json"), err)
	}

	// Place tokens by id rather than by map iteration, and insist the ids
	// are exactly 0..n-1: a gap would shift every later id.
	tokens := make([]string, len(ids))
	seen := make([]bool, len(ids))
	for text, id := range ids {
		if id < 0 || int(id) >= len(ids) || seen[id] {
			return nil, fmt.Errorf("tokenizer vocabulary: id %d of %q is out of range or repeated", id, text)
		}
		tokens[id], seen[id] = text, true
	}

	merges, err := readMerges(filepath.Join(dir, "vocab.bpe"))
	if err != nil {
		return nil, err
	}

	v := &Vocab{Tokens: tokens, Merges: merges, Types: make([]int32, len(tokens))}
	for i := range v.Types {
		v.Types[i] = tokenTypeNormal
	}
	add := func(text string, typ int32) uint32 {
		v.Tokens = append(v.Tokens, text)
		v.Types = append(v.Types, typ)
		return uint32(len(v.Tokens) - 1)
	}
	for _, text := range []string{TokenEndOfText, TokenIMStart, TokenIMEnd, TokenToolCall, TokenToolCallEnd,
		TokenTools, TokenToolsEnd, TokenToolResponse, TokenToolResponseE} {
		if _, ok := ids[text]; ok {
			return nil, fmt.Errorf("tokenizer vocabulary already has %q", text)
		}
		typ := tokenTypeUserDefined
		if strings.HasPrefix(text, "<|") {
			typ = tokenTypeControl
		}
		id := add(text, typ)
		switch text {
		case TokenEndOfText:
			v.EndOfText = id
		case TokenIMEnd:
			v.IMEnd = id
		}
	}
	return v, nil
}

func readMerges(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer merges: %w", err)
	}
	defer f.Close()

	var merges []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		// GPT-2's file starts with a "#version" comment; Llama's does not.
		if line == "" || strings.HasPrefix(line, "#version") {
			continue
		}
		if strings.Count(line, " ") != 1 {
			return nil, fmt.Errorf("tokenizer merges %s: line %q is not two symbols", path, line)
		}
		merges = append(merges, line)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer merges %s: %w", path, err)
	}
	return merges, nil
}
