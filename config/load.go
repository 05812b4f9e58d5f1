package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Error is one configuration problem, located.
type Error struct {
	File string
	Line int    // 0 when the problem has no single line
	Key  string // key path such as backends[1].url; empty for the whole file
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Load reads, decodes, defaults and validates the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	return Parse(path, data)
}

// Parse is Load for bytes already read; name is used in errors.
func Parse(name string, data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := yamlErrorLine(err)
		return nil, &Error{File: name, Line: line, Msg: msg}
	}
	cfg := &Config{}
	if len(doc.Content) > 0 { // an empty file is an empty config
		d := decoder{file: name, lines: map[string]int{}}
		if err := d.decode(doc.Content[0], reflect.ValueOf(cfg).Elem(), ""); err != nil {
			return nil, err
		}
		cfg.lines = d.lines
	}
	cfg.applyDefaults()
	if err := cfg.validate(name); err != nil {
		return nil, err
	}
	return cfg, nil
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// yamlErrorLine splits the parser's "yaml: line N: msg" into N and msg.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, msg[len(m[0]):]
	}
	return 0, strings.TrimPrefix(msg, "yaml: ")
}

// decoder maps YAML nodes onto the config structs itself, so that every error can name
// the file, line and key path, and unknown keys are caught where they stand.
type decoder struct {
	file  string
	lines map[string]int // key path → line, for validation messages
}

func (d decoder) errorf(n *yaml.Node, key, format string, args ...any) error {
	return &Error{File: d.file, Line: n.Line, Key: key, Msg: fmt.Sprintf(format, args...)}
}

var (
	durationType = reflect.TypeFor[Duration]()
	byteSizeType = reflect.TypeFor[ByteSize]()
	rawJSONType  = reflect.TypeFor[RawJSON]()
)

func (d decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // "key:" with no value leaves the default
	}
	switch v.Type() {
	case durationType:
		if n.Kind != yaml.ScalarNode {
			return d.errorf(n, path, "expected a duration such as 30s or 10m")
		}
		if n.Value == "never" && path == "search.ttl" {
			v.SetInt(int64(NoExpiry))
			return nil
		}
		if n.Value == "off" && path == "server.keepalive_interval" {
			v.SetInt(int64(Off))
			return nil
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil || dur < 0 {
			return d.errorf(n, path, "invalid duration %q: write it like 30s, 10m or 1h", n.Value)
		}
		v.SetInt(int64(dur))
		return nil
	case byteSizeType:
		size, err := parseByteSize(n.Value)
		if n.Kind != yaml.ScalarNode || err != nil {
			return d.errorf(n, path, "invalid size %q: write bytes (1048576) or a size such as 16MiB", n.Value)
		}
		v.SetInt(size)
		return nil
	case rawJSONType:
		raw, err := d.json(n, path)
		if err != nil {
			return err
		}
		v.SetBytes(raw)
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := d.decode(n, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Map:
		return d.decodeMap(n, v, path)
	case reflect.Struct:
		return d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errorf(n, path, "expected a list")
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			sub := fmt.Sprintf("%s[%d]", path, i)
			d.lines[sub] = item.Line
			if err := d.decode(item, s.Index(i), sub); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			return d.errorf(n, path, "expected a string")
		}
		v.SetString(n.Value)
		return nil
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 0, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			return d.errorf(n, path, "expected an integer, got %q", n.Value)
		}
		v.SetInt(i)
		return nil
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if n.Kind != yaml.ScalarNode || err != nil {
			return d.errorf(n, path, "expected a number, got %q", n.Value)
		}
		v.SetFloat(f)
		return nil
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
			return d.errorf(n, path, "expected true or false, got %q", n.Value)
		}
		v.SetBool(b)
		return nil
	}
	return d.errorf(n, path, "cannot decode into %s", v.Type())
}

func (d decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		if path == "" {
			return d.errorf(n, path, "the file must be a mapping of keys (listen, backends, ...)")
		}
		return d.errorf(n, path, "expected a mapping of keys")
	}
	fields := map[string][]int{}
	var known []string
	var collect func(t reflect.Type, at []int)
	collect = func(t reflect.Type, at []int) {
		for i := 0; i < t.NumField(); i++ {
			idx := append(slices.Clone(at), i)
			switch tag := t.Field(i).Tag.Get("yaml"); tag {
			case "":
			case ",inline": // an embedded struct's keys are the outer one's
				collect(t.Field(i).Type, idx)
			default:
				fields[tag] = idx
				known = append(known, tag)
			}
		}
	}
	collect(v.Type(), nil)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := k.Value
		sub := key
		if path != "" {
			sub = path + "." + key
		}
		idx, ok := fields[key]
		if !ok {
			return d.errorf(k, sub, "unknown key (known keys here: %s)", strings.Join(known, ", "))
		}
		if seen[key] {
			return d.errorf(k, sub, "key appears twice")
		}
		seen[key] = true
		d.lines[sub] = k.Line
		if err := d.decode(val, v.FieldByIndex(idx), sub); err != nil {
			return err
		}
	}
	return nil
}

// decodeMap reads a mapping with string keys (environment variables, headers), each
// value decoded as the map's element type.
func (d decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode || v.Type().Key().Kind() != reflect.String {
		return d.errorf(n, path, "expected a mapping of names to values")
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		sub := path + "." + k.Value
		if m.MapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key())).IsValid() {
			return d.errorf(k, sub, "key appears twice")
		}
		d.lines[sub] = k.Line
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(val, e, sub); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
	}
	v.Set(m)
	return nil
}

// json writes a YAML value as JSON, keys in the file's order, so that what the file
// says is what reaches the model, byte for byte the same at every start.
func (d decoder) json(n *yaml.Node, path string) ([]byte, error) {
	var b []byte
	var walk func(n *yaml.Node, path string) error
	walk = func(n *yaml.Node, path string) error {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.MappingNode:
			b = append(b, '{')
			for i := 0; i+1 < len(n.Content); i += 2 {
				if i > 0 {
					b = append(b, ',')
				}
				k := n.Content[i]
				if k.Kind != yaml.ScalarNode {
					return d.errorf(k, path, "a JSON object's keys must be strings")
				}
				b = appendJSONString(b, k.Value)
				b = append(b, ':')
				if err := walk(n.Content[i+1], path+"."+k.Value); err != nil {
					return err
				}
			}
			b = append(b, '}')
		case yaml.SequenceNode:
			b = append(b, '[')
			for i, item := range n.Content {
				if i > 0 {
					b = append(b, ',')
				}
				if err := walk(item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			b = append(b, ']')
		case yaml.ScalarNode:
			switch n.Tag {
			case "!!null":
				b = append(b, "null"...)
			case "!!bool":
				var v bool
				if err := n.Decode(&v); err != nil {
					return d.errorf(n, path, "%v", err)
				}
				b = strconv.AppendBool(b, v)
			case "!!int", "!!float":
				f, err := strconv.ParseFloat(n.Value, 64)
				if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
					return d.errorf(n, path, "%q is not a number JSON can carry", n.Value)
				}
				if _, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
					b = append(b, n.Value...)
				} else {
					b = strconv.AppendFloat(b, f, 'g', -1, 64)
				}
			default:
				b = appendJSONString(b, n.Value)
			}
		default:
			return d.errorf(n, path, "cannot be written as JSON")
		}
		return nil
	}
	if err := walk(n, path); err != nil {
		return nil, err
	}
	return b, nil
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

var errSize = errors.New("bad size")

func parseByteSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, errSize
	}
	return n * mult, nil
}
