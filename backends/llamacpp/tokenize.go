package llamacpp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Token is one token of a text as the served model's tokenizer splits it.
type Token struct {
	ID int
	// Piece is the token's text as bytes, when asked for, else nil. It need not be valid
	// UTF-8: a character may span tokens.
	Piece []byte
}

// Tokenize asks POST /tokenize for the tokens of text, with special tokens parsed and no
// BOS added (the endpoint's defaults), and with each token's piece when withPieces is
// set (tools/server/README.md, "POST /tokenize").
func (b *Backend) Tokenize(ctx context.Context, text string, withPieces bool) ([]Token, error) {
	var req bytes.Buffer
	e := json.NewEncoder(&req)
	e.SetEscapeHTML(false)
	if err := e.Encode(struct {
		Content    string `json:"content"`
		WithPieces bool   `json:"with_pieces"`
	}{text, withPieces}); err != nil {
		return nil, fmt.Errorf("backend %q: encode /tokenize body: %w", b.opt.Name, err)
	}
	raw, err := b.post(ctx, "/tokenize", bytes.TrimSuffix(req.Bytes(), []byte("\n")), false)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Tokens *[]wireToken `json:"tokens"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil || resp.Tokens == nil {
		if err == nil {
			err = fmt.Errorf("no \"tokens\" in %s", clip(string(raw)))
		}
		return nil, b.badAnswer("/tokenize", err)
	}
	out := make([]Token, len(*resp.Tokens))
	for i, t := range *resp.Tokens {
		if withPieces && t.Piece == nil {
			return nil, b.badAnswer("/tokenize", fmt.Errorf("token %d has no piece", i))
		}
		out[i] = Token(t)
	}
	return out, nil
}

// wireToken reads one element of /tokenize's "tokens": an id, or {"id", "piece"} where
// the piece is a string when it is valid UTF-8 and an array of bytes otherwise.
type wireToken Token

func (t *wireToken) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return json.Unmarshal(b, &t.ID)
	}
	var o struct {
		ID    *int            `json:"id"`
		Piece json.RawMessage `json:"piece"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	if o.ID == nil {
		return errors.New("token without an id")
	}
	t.ID = *o.ID
	switch {
	case len(o.Piece) == 0 || string(o.Piece) == "null":
	case o.Piece[0] == '"':
		var s string
		if err := json.Unmarshal(o.Piece, &s); err != nil {
			return err
		}
		t.Piece = []byte(s)
	default:
		var bs []int
		if err := json.Unmarshal(o.Piece, &bs); err != nil {
			return fmt.Errorf("piece of token %d: %w", t.ID, err)
		}
		t.Piece = make([]byte, len(bs))
		for i, v := range bs {
			if v < 0 || v > 255 {
				return fmt.Errorf("piece of token %d: %d is not a byte", t.ID, v)
			}
			t.Piece[i] = byte(v)
		}
	}
	return nil
}

// ChatTemplate asks GET /props for the model's original Jinja chat template
// (tools/server/README.md, "GET /props": "chat_template"), from which toolcall.Detect
// tells the tool-call wire format.
func (b *Backend) ChatTemplate(ctx context.Context) (string, error) {
	raw, err := b.get(ctx, "/props")
	if err != nil {
		return "", err
	}
	var props struct {
		ChatTemplate *string `json:"chat_template"`
	}
	if err := json.Unmarshal(raw, &props); err != nil || props.ChatTemplate == nil {
		if err == nil {
			err = fmt.Errorf("no \"chat_template\" in %s", clip(string(raw)))
		}
		return "", b.badAnswer("/props", err)
	}
	return *props.ChatTemplate, nil
}
