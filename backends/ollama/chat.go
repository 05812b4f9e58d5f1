package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/ollama/ollama/api"

	"github.com/maskgate/maskgate/backends"
)

// maxLine caps one NDJSON line of an answer, as the api client does (8 MB); past it the
// answer fails as too large.
const maxLine = 8 << 20

// lineBuffer is what the reader holds for a line before it grows on demand.
const lineBuffer = 16 << 10

// chatter is POST /api/chat, one call per answer line. It is api.Client.Chat, the same
// request and the same errors (api.StatusError, api.AuthorizationError, an
// {"error": ...} line), with a line buffer that grows with the lines instead of the
// 8 MB the api client allocates for every call (its stream's bufio.Scanner buffer).
type chatter struct {
	hc   *http.Client
	base *url.URL
	name string
}

func (c *chatter) Chat(ctx context.Context, req *api.ChatRequest, fn api.ChatResponseFunc) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.JoinPath("/api/chat").String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rd := bufio.NewReaderSize(resp.Body, lineBuffer)
	var long []byte // a line longer than the reader's buffer, gathered
	for {
		chunk, rerr := rd.ReadSlice('\n')
		if len(long)+len(chunk) > maxLine {
			return &backends.Error{Status: http.StatusBadGateway, Type: "upstream_error", Code: backends.CodeTooLarge,
				Message: fmt.Sprintf("backend %q sent an answer line over %d bytes", c.name, maxLine)}
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = long[:0]
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			if err := c.line(resp, line, fn); err != nil {
				return err
			}
		}
		if rerr != nil {
			// The end, or a failed read: as with the api client, the caller finds the
			// read's error in its readNote, and an answer without "done" is incomplete.
			return nil
		}
	}
}

// line handles one NDJSON line as the api client does.
func (c *chatter) line(resp *http.Response, bts []byte, fn api.ChatResponseFunc) error {
	var e struct {
		Error     string `json:"error,omitempty"`
		SigninURL string `json:"signin_url,omitempty"`
	}
	if err := json.Unmarshal(bts, &e); err != nil {
		if resp.StatusCode >= http.StatusBadRequest {
			return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: string(bts)}
		}
		return errors.New(string(bts))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return api.AuthorizationError{StatusCode: resp.StatusCode, Status: resp.Status, SigninURL: e.SigninURL}
	case resp.StatusCode >= http.StatusBadRequest:
		return api.StatusError{StatusCode: resp.StatusCode, Status: resp.Status, ErrorMessage: e.Error}
	case e.Error != "":
		return errors.New(e.Error)
	}
	var cr api.ChatResponse
	if err := json.Unmarshal(bts, &cr); err != nil {
		return err
	}
	return fn(cr)
}
