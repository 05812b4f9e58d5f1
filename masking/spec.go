package masking

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Format is a tool-call wire format as the bytes a model emits around one
// call: Trigger NameOpen NAME NameClose ARGUMENTS End. The built-in formats
// are Hermes, Llama3, Mistral, Harmony and DeepSeek (see FormatByName);
// Format stays comparable, so a spec's format can be matched against them.
type Format struct {
	// Name identifies the format in errors and cache keys.
	Name string
	// Lead is fixed text the output starts with, before the Trigger, when
	// a call is required at once (ModeRequired, ModeSpecified), e.g.
	// harmony's "<|channel|>commentary ". Free text before a trigger is not
	// checked against it. May be empty.
	Lead string
	// Trigger starts a call, e.g. "<tool_call>"; often one special token. Required.
	Trigger string
	// NameOpen is the fixed text between the trigger and the name. May be empty.
	NameOpen string
	// NameClose ends the name and leads into the arguments. Required; its first
	// byte must not occur in any name, so that a name that is a prefix of
	// another (get_file, get_files) is closed unambiguously.
	NameClose string
	// End closes the call and returns to free text. If empty, the call
	// returns to free text right after NameClose: the arguments are free
	// text, and any later Trigger starts a new constrained call (formats
	// without an end marker, or whose end marker is not reliable).
	End string
}

// Hermes is the Hermes / Qwen 2.5–3 format:
// `<tool_call>\n{"name": "NAME", "arguments": {…}}\n</tool_call>`.
func Hermes() Format {
	return Format{
		Name:      "hermes",
		Trigger:   "<tool_call>",
		NameOpen:  "\n{\"name\": \"",
		NameClose: "\", \"arguments\": ",
		End:       "</tool_call>",
	}
}

// Mode says whether and how a call must be made.
type Mode int

const (
	// ModeAuto (the zero value) allows free text; a call may start at any time.
	ModeAuto Mode = iota
	// ModeRequired makes the output start with a call at once.
	ModeRequired
	// ModeSpecified is ModeRequired with the names narrowed to those starting
	// with Spec.Namespace (a whole name forces that tool).
	ModeSpecified
)

func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeRequired:
		return "required"
	case ModeSpecified:
		return "specified"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Spec is everything a Mask is compiled from, apart from the vocabulary.
type Spec struct {
	Format Format
	// Allowed are the names that may be called: loaded tools and meta-tools.
	// Order and duplicates do not matter. If empty in ModeAuto, no call can
	// be started at all.
	Allowed []string
	Mode    Mode
	// Namespace is the name prefix for ModeSpecified; ignored otherwise.
	Namespace string
	// OneCall allows at most one call (OpenAI's parallel_tool_calls: false): GBNF then
	// ends at the first call's end, where the format would otherwise allow parallel calls.
	// StructuralTag then has "stop_after_first", except in DeepSeek (see there). The
	// token mask itself constrains one call at a time and ignores it.
	OneCall bool
}

const maxMarker = 200 // the KMP tables store states in a byte

func (f Format) validate() error {
	for _, m := range []struct{ field, v string }{{"Trigger", f.Trigger}, {"NameClose", f.NameClose}} {
		if m.v == "" {
			return fmt.Errorf("masking: format %q: %s is empty", f.Name, m.field)
		}
	}
	for _, m := range []struct{ field, v string }{{"Lead", f.Lead}, {"Trigger", f.Trigger}, {"NameOpen", f.NameOpen}, {"NameClose", f.NameClose}, {"End", f.End}} {
		if len(m.v) > maxMarker {
			return fmt.Errorf("masking: format %q: %s is longer than %d bytes", f.Name, m.field, maxMarker)
		}
	}
	return nil
}

// check validates the spec apart from its names.
func (s Spec) check() error {
	if err := s.Format.validate(); err != nil {
		return err
	}
	if s.Mode < ModeAuto || s.Mode > ModeSpecified {
		return fmt.Errorf("masking: unknown mode %d", int(s.Mode))
	}
	if s.Mode == ModeSpecified && s.Namespace == "" {
		return errors.New("masking: mode specified needs a Namespace")
	}
	return nil
}

// names validates the spec and returns the names to allow, deduplicated.
func (s Spec) names() ([]string, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(s.Allowed))
	out := make([]string, 0, len(s.Allowed))
	for _, n := range s.Allowed {
		if err := checkName(n, s.Format.NameClose[0]); err != nil {
			return nil, err
		}
		if s.Mode == ModeSpecified && !strings.HasPrefix(n, s.Namespace) {
			continue
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if len(out) == 0 && s.Mode != ModeAuto {
		return nil, fmt.Errorf("masking: mode %s with no allowed name (namespace %q)", s.Mode, s.Namespace)
	}
	return out, nil
}

// checkName admits the names a JSON string holds without escapes, since the
// mask constrains raw bytes.
func checkName(n string, closer byte) error {
	if n == "" {
		return errors.New("masking: empty tool name")
	}
	if !utf8.ValidString(n) {
		return fmt.Errorf("masking: tool name %q is not valid UTF-8", n)
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x20 || c == '"' || c == '\\' || c == 0x7f || c == closer {
			return fmt.Errorf("masking: tool name %q holds byte %q, which needs escaping or ends the name", n, c)
		}
	}
	return nil
}
