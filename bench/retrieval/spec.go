package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The catalog is written in a compact text form (testdata/spec/*.txt) and generated into
// testdata/catalog.json, a tools file as the gateway reads it. The form:
//
//	service github code hosting          # namespace, then the category of its tools
//	shared owner string: Account owner.  # a parameter tools can name as @owner
//	tool github_create_issue
//	  Description text, one or more lines.
//	  - @owner*                          # a shared parameter; * marks it required
//	  - title* string: Issue title.      # name, type, description
//	  - state enum:open|closed: Filter.  # string[], integer, number, boolean, object too
//	  keywords: bug report, ticket       # optional
//
// Lines starting with '#' are comments.

type specParam struct {
	name, typ, desc string
	required        bool
}

type specTool struct {
	name, category string
	desc           []string
	params         []specParam
	keywords       []string
}

// parseSpec reads spec text into tools, in order. shared holds @-parameters across files.
func parseSpec(r io.Reader, file string, shared map[string]specParam) ([]specTool, error) {
	var tools []specTool
	var category string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", file, n, fmt.Sprintf(format, args...))
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "service "):
			f := strings.Fields(line)
			if len(f) < 3 {
				return nil, fail("want: service NAME CATEGORY")
			}
			category = strings.Join(f[2:], " ")
		case strings.HasPrefix(line, "shared "):
			p, err := parseParam(strings.TrimPrefix(line, "shared "), nil)
			if err != nil {
				return nil, fail("%v", err)
			}
			shared[p.name] = p
		case strings.HasPrefix(line, "tool "):
			tools = append(tools, specTool{name: strings.TrimSpace(line[5:]), category: category})
		case len(tools) == 0:
			return nil, fail("text before the first tool")
		case strings.HasPrefix(line, "- "):
			p, err := parseParam(line[2:], shared)
			if err != nil {
				return nil, fail("%v", err)
			}
			t := &tools[len(tools)-1]
			t.params = append(t.params, p)
		case strings.HasPrefix(line, "keywords:"):
			t := &tools[len(tools)-1]
			for _, k := range strings.Split(line[len("keywords:"):], ",") {
				t.keywords = append(t.keywords, strings.TrimSpace(k))
			}
		default:
			t := &tools[len(tools)-1]
			t.desc = append(t.desc, line)
		}
	}
	return tools, sc.Err()
}

// parseParam reads "name[*] type: description" or "@name[*]".
func parseParam(s string, shared map[string]specParam) (specParam, error) {
	if ref, ok := strings.CutPrefix(s, "@"); ok {
		req := strings.HasSuffix(ref, "*")
		p, found := shared[strings.TrimSuffix(ref, "*")]
		if !found {
			return p, fmt.Errorf("no shared parameter %q", ref)
		}
		p.required = req
		return p, nil
	}
	head, desc, ok := strings.Cut(s, ": ")
	f := strings.Fields(head)
	if !ok || len(f) != 2 {
		return specParam{}, fmt.Errorf("want: name[*] type: description; got %q", s)
	}
	p := specParam{name: strings.TrimSuffix(f[0], "*"), typ: f[1], desc: strings.TrimSpace(desc)}
	p.required = strings.HasSuffix(f[0], "*")
	return p, nil
}

// writeCatalog writes tools as a JSON array, one tool object per line, members in a fixed
// order, so the file is reviewable and the same on every run.
func writeCatalog(w io.Writer, tools []specTool) error {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, t := range tools {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`{"type":"function","function":{"name":`)
		str(&b, t.name)
		b.WriteString(`,"description":`)
		str(&b, strings.Join(t.desc, " "))
		b.WriteString(`,"parameters":{"type":"object","properties":{`)
		var req []string
		for j, p := range t.params {
			if j > 0 {
				b.WriteByte(',')
			}
			str(&b, p.name)
			b.WriteByte(':')
			if err := schema(&b, p); err != nil {
				return fmt.Errorf("%s.%s: %w", t.name, p.name, err)
			}
			if p.required {
				req = append(req, p.name)
			}
		}
		b.WriteString(`},"required":[`)
		for j, r := range req {
			if j > 0 {
				b.WriteByte(',')
			}
			str(&b, r)
		}
		b.WriteString(`]}}`)
		if len(t.keywords) > 0 {
			b.WriteString(`,"keywords":[`)
			for j, k := range t.keywords {
				if j > 0 {
					b.WriteByte(',')
				}
				str(&b, k)
			}
			b.WriteByte(']')
		}
		b.WriteString(`,"category":`)
		str(&b, t.category)
		b.WriteByte('}')
	}
	b.WriteString("\n]\n")
	_, err := w.Write(b.Bytes())
	return err
}

func schema(b *bytes.Buffer, p specParam) error {
	item := ""
	switch {
	case strings.HasPrefix(p.typ, "enum:"):
		b.WriteString(`{"type":"string","enum":[`)
		for i, v := range strings.Split(p.typ[5:], "|") {
			if i > 0 {
				b.WriteByte(',')
			}
			str(b, v)
		}
		b.WriteString(`],"description":`)
		str(b, p.desc)
		b.WriteByte('}')
		return nil
	case strings.HasSuffix(p.typ, "[]"):
		item = strings.TrimSuffix(p.typ, "[]")
	}
	switch strings.TrimSuffix(p.typ, "[]") {
	case "string", "integer", "number", "boolean", "object":
	default:
		return fmt.Errorf("unknown type %q", p.typ)
	}
	if item != "" {
		fmt.Fprintf(b, `{"type":"array","items":{"type":%q},"description":`, item)
	} else {
		fmt.Fprintf(b, `{"type":%q,"description":`, p.typ)
	}
	str(b, p.desc)
	b.WriteByte('}')
	return nil
}

func str(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}
