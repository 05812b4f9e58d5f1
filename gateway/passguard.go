package gateway

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/messages"
	"github.com/maskgate/maskgate/gateway/responses"
)

// A request passed to an upstream that speaks its door (native.go) runs there under the
// operator's account: a hosted tool in it (an MCP server the client names, a search over
// the operator's vector stores, a file of the operator's by id) would run with the
// operator's credentials. So the body it passes is the client's with what
// doors.hosted_tools decides for the translated path applied first: under "drop" each
// hosted tool, hosted item or block, MCP server list and file reference is edited out of
// the bytes (the rest byte for byte), and named; under "refuse" it is a 400.

// passEdit is what the hosted-tools decision made of one passed body.
type passEdit struct {
	refuse   bool     // hosted_tools: refuse
	dropped  []string // the hosted tools' types left out, once each, in order
	warnings []string // what else was left out
	log      *slog.Logger
}

func (e *passEdit) drop(typ string) {
	if !slices.Contains(e.dropped, typ) {
		e.dropped = append(e.dropped, typ)
	}
}

// refusal is the 400 for a hosted thing under hosted_tools: refuse.
func hostedRefusal(param, what string) error {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Param: param, Code: "hosted_tool_not_allowed",
		Message: what + " would run on the upstream's account, which this gateway does not allow (doors.hosted_tools: refuse); leave it out"}
}

// filterArray is arr with each element as keep maps it: nil leaves it out, the element
// itself keeps it unchanged (byte for byte), other bytes replace it. changed is false,
// and arr returned as it is, when nothing was left out or replaced.
func filterArray(arr []byte, keep func(i int, el []byte) ([]byte, error)) (out []byte, changed bool, err error) {
	var kept [][]byte
	i := 0
	err = oai.Elements(arr, func(el []byte) error {
		k, err := keep(i, el)
		i++
		if err != nil {
			return err
		}
		if k == nil || len(k) != len(el) || &k[0] != &el[0] {
			changed = true
		}
		if k != nil {
			kept = append(kept, k)
		}
		return nil
	})
	if err != nil || !changed {
		return arr, false, err
	}
	n := 2
	for _, k := range kept {
		n += len(k) + 1
	}
	out = append(make([]byte, 0, n), '[')
	for j, k := range kept {
		if j > 0 {
			out = append(out, ',')
		}
		out = append(out, k...)
	}
	return append(out, ']'), true, nil
}

// editMember is body with its member key's value, an array, filtered by keep; body as
// it is when the member is absent or not an array.
func editMember(body []byte, key string, keep func(i int, el []byte) ([]byte, error)) ([]byte, error) {
	v, ok, _ := oai.Member(body, key)
	if !ok || len(v) == 0 || v[0] != '[' {
		return body, nil
	}
	out, changed, err := filterArray(v, keep)
	if err != nil || !changed {
		return body, err
	}
	return oai.Set(body, key, out)
}

// strMember is the string value of member key of the object b, escapes read; "" when
// absent or not a string.
func strMember(b []byte, key string) string {
	v, ok, _ := oai.Member(b, key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return ""
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

func present(b []byte, key string) bool {
	v, ok, _ := oai.Member(b, key)
	return ok && string(v) != "null"
}

func index(param string, i int) string { return param + "[" + strconv.Itoa(i) + "]" }

// passResponses applies the hosted-tools decision to a Responses body passed to OpenAI:
// hosted tools (web_search, file_search, code_interpreter, mcp, ..., a tool_search not
// run by the client), hosted tools' items in the input, and input_file and input_image
// parts that name a file of the upstream's account by file_id.
func passResponses(body []byte, e *passEdit) ([]byte, error) {
	body, err := editMember(body, "tools", func(i int, el []byte) ([]byte, error) {
		typ := strMember(el, "type")
		if !responses.HostedTool(typ) || (typ == "tool_search" && strMember(el, "execution") == "client") {
			return el, nil
		}
		if e.refuse {
			return nil, hostedRefusal(index("tools", i)+".type", "the hosted tool "+strconv.Quote(typ))
		}
		e.drop(typ)
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return editMember(body, "input", func(i int, item []byte) ([]byte, error) {
		p := index("input", i)
		if typ := strMember(item, "type"); responses.HostedItem(typ) {
			if e.refuse {
				return nil, hostedRefusal(p+".type", "the hosted tool's item "+strconv.Quote(typ))
			}
			e.drop(typ)
			return nil, nil
		}
		return editMember(item, "content", func(j int, part []byte) ([]byte, error) {
			typ := strMember(part, "type")
			if (typ != "input_file" && typ != "input_image") || strMember(part, "file_id") == "" {
				return part, nil
			}
			pp := index(p+".content", j)
			if e.refuse {
				return nil, hostedRefusal(pp+".file_id", "a file by file_id")
			}
			what, send := "A file", "file_data"
			if typ == "input_image" {
				what, send = "An image", "image_url"
			}
			note := "[" + what + " was left out: this gateway does not pass files by file_id to the upstream's account; send " + send + ".]"
			e.warnings = append(e.warnings, pp+": "+note)
			return append(oai.AppendString([]byte(`{"type":"input_text","text":`), note), '}'), nil
		})
	})
}

// passMessages applies the hosted-tools decision to a Messages body passed to
// Anthropic: server tools (web_search, web_fetch, code_execution, ...), mcp_servers,
// the container they run in, their blocks in the conversation, and documents by file
// (the Files API of the upstream's account), in messages and in tool results.
func passMessages(body []byte, e *passEdit) ([]byte, error) {
	body, err := editMember(body, "tools", func(i int, el []byte) ([]byte, error) {
		typ := strMember(el, "type")
		if !messages.ServerTool(typ) {
			return el, nil
		}
		if e.refuse {
			return nil, hostedRefusal(index("tools", i)+".type", "the server tool "+strconv.Quote(typ))
		}
		e.drop(typ)
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	for _, key := range []string{"mcp_servers", "container"} {
		if !present(body, key) {
			continue
		}
		if v, _, _ := oai.Member(body, key); string(v) == "[]" {
			continue
		}
		if e.refuse {
			return nil, hostedRefusal(key, key)
		}
		e.drop(key)
		if body, err = oai.Delete(body, key); err != nil {
			return nil, err
		}
	}
	var blocks func(p string) func(j int, b []byte) ([]byte, error)
	blocks = func(p string) func(j int, b []byte) ([]byte, error) {
		return func(j int, b []byte) ([]byte, error) {
			pp := p + "." + strconv.Itoa(j)
			typ := strMember(b, "type")
			switch {
			case messages.ServerBlock(typ):
				if e.refuse {
					return nil, hostedRefusal(pp+".type", "the server tool's block "+strconv.Quote(typ))
				}
				e.drop(typ)
				return nil, nil
			case typ == "tool_result":
				return editMember(b, "content", blocks(pp+".content"))
			case typ == "document" || typ == "image":
				src, _, _ := oai.Member(b, "source")
				if strMember(src, "type") != "file" {
					return b, nil
				}
				if e.refuse {
					return nil, hostedRefusal(pp+".source", "a "+typ+" by file")
				}
				note := "[A " + typ + " was left out: this gateway does not pass files by file_id to the upstream's account; send it as base64.]"
				e.warnings = append(e.warnings, pp+": "+note)
				return append(oai.AppendString([]byte(`{"type":"text","text":`), note), '}'), nil
			}
			return b, nil
		}
	}
	return editMember(body, "messages", func(i int, m []byte) ([]byte, error) {
		return editMember(m, "content", blocks("messages."+strconv.Itoa(i)+".content"))
	})
}

// prepareForPass is body and the beta header name of r as an upstream that speaks the
// door may see them, by the host's hosted-tools decision and beta flags.
func prepareForPass(r *http.Request, body []byte, host *doorHost, name string, edit func([]byte, *passEdit) ([]byte, error)) ([]byte, http.Header, passEdit, error) {
	e := passEdit{refuse: host.hosted == "refuse", log: host.log}
	body, err := edit(body, &e)
	if err != nil {
		return nil, nil, e, err
	}
	h := http.Header{}
	if err := passBeta(r.Header, name, host.betas, &e, h); err != nil {
		return nil, nil, e, err
	}
	return body, h, e, nil
}

func (d *messagesDoor) passRequest(r *http.Request, body []byte) ([]byte, http.Header, passEdit, error) {
	return prepareForPass(r, body, d.host, "Anthropic-Beta", passMessages)
}

func (*messagesDoor) passed() {}
