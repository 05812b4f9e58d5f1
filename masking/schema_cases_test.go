package masking

// schemaCases are tool parameters with instances a grammar must accept and
// instances it must refuse, the expectation written by hand: JSON Schema's
// meaning, with the readings the package doc names (required first then
// optional in property order, no extra keys next to "properties" unless
// additionalProperties allows them, the bounded whitespace). llama.cpp
// runs them in schema_llamacpp_test.go; the pure-Go tests render them.
//
// llamaDiffers marks cases where llama.cpp's own converter reads the schema
// otherwise (the oracle comparison skips those verdicts), with why.
var schemaCases = []struct {
	name         string
	schema       string
	accept       []string
	refuse       []string
	llamaDiffers string
}{
	{
		name:   "enum and required",
		schema: `{"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["unit"]}`,
		accept: []string{`{"unit": "celsius"}`, `{"unit":"fahrenheit"}`, "{\n  \"unit\": \"celsius\"\n}"},
		refuse: []string{`{"unit": "kelvin"}`, `{}`, `{"unit": "celsius", "x": 1}`, `{"unit": 1}`, `{"unit": "celsius"`, `["celsius"]`, `{"unit": "Celsius"}`},
	},
	{
		name:   "primitive types",
		schema: `{"type":"object","properties":{"i":{"type":"integer"},"n":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}},"required":["i","n","b","z"]}`,
		accept: []string{`{"i": -12, "n": 1.5e3, "b": true, "z": null}`, `{"i": 0, "n": -0.25, "b": false, "z": null}`},
		refuse: []string{`{"i": 1.5, "n": 1, "b": true, "z": null}`, `{"i": 1, "n": "1", "b": true, "z": null}`, `{"i": 1, "n": 1, "b": 1, "z": null}`,
			`{"i": 1, "n": 1, "b": true, "z": 0}`, `{"i": 01, "n": 1, "b": true, "z": null}`, `{"n": 1, "i": 1, "b": true, "z": null}`},
	},
	{
		name:   "string lengths in characters",
		schema: `{"type":"object","properties":{"s":{"type":"string","minLength":1,"maxLength":3}},"required":["s"]}`,
		accept: []string{`{"s": "a"}`, `{"s": "abc"}`, `{"s": "日本語"}`, `{"s": "a\nb"}`, `{"s": "\u00e9\"\\"}`},
		refuse: []string{`{"s": ""}`, `{"s": "abcd"}`, `{"s": "日本語!"}`, "{\"s\": \"a\nb\"}", `{"s": "\x"}`},
	},
	{
		name:   "optional properties in order",
		schema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}}`,
		accept: []string{`{}`, `{ }`, `{"a": 1}`, `{"b": 2}`, `{"c": 3}`, `{"a": 1, "c": 3}`, `{"a": 1, "b": 2, "c": 3}`, `{"b": 2, "c": 3}`},
		// {"b":…,"a":…} is valid JSON Schema but not the order the grammar writes.
		refuse: []string{`{"b": 2, "a": 1}`, `{"a": 1, "a": 1}`, `{"d": 1}`, `{"a": "1"}`, `{"a": 1,}`, `{,"a": 1}`},
	},
	{
		name:   "required then optional",
		schema: `{"type":"object","properties":{"opt":{"type":"boolean"},"req":{"type":"boolean"}},"required":["req"]}`,
		accept: []string{`{"req": true}`, `{"req": true, "opt": false}`},
		refuse: []string{`{"opt": false}`, `{"opt": false, "req": true}`, `{}`},
	},
	{
		name:   "extra keys allowed",
		schema: `{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":true}`,
		accept: []string{`{}`, `{"a": 1}`, `{"a": 1, "zz": [1, {"q": null}]}`, `{"b": "x", "ab": 2}`, `{"": 1}`, `{"a\u0062": 1}`},
		refuse: []string{`{"a": "x"}`, `{"zz": 1, "a": 1}`, `{"a": 1, "a": 2}`},
	},
	{
		name:   "extra keys with a schema",
		schema: `{"type":"object","additionalProperties":{"type":"integer"}}`,
		accept: []string{`{}`, `{"x": 1}`, `{"x": 1, "y": -2}`},
		refuse: []string{`{"x": "1"}`, `{"x": 1, "y": true}`},
	},
	{
		name:   "closed empty object",
		schema: `{"type":"object","additionalProperties":false}`,
		accept: []string{`{}`, `{ }`},
		refuse: []string{`{"a": 1}`},
	},
	{
		name:   "any object",
		schema: `{"type":"object"}`,
		accept: []string{`{}`, `{"a": [1, "x", {"b": null}], "c": true}`},
		refuse: []string{`[]`, `"x"`, `{"a"}`},
	},
	{
		name:         "required without properties",
		schema:       `{"type":"object","required":["id"]}`,
		accept:       []string{`{"id": 1}`, `{"id": "x", "more": 2}`},
		refuse:       []string{`{}`, `{"more": 2}`},
		llamaDiffers: "llama.cpp ignores required without properties",
	},
	{
		name:   "array bounds",
		schema: `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3}},"required":["xs"]}`,
		accept: []string{`{"xs": [1]}`, `{"xs": [1, 2, 3]}`, `{"xs": [ 1,2 ]}`},
		refuse: []string{`{"xs": []}`, `{"xs": [1, 2, 3, 4]}`, `{"xs": ["a"]}`, `{"xs": [1,]}`},
	},
	{
		name:         "prefixItems with no more items",
		schema:       `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}},"required":["p"]}`,
		accept:       []string{`{"p": []}`, `{"p": ["a"]}`, `{"p": ["a", 1]}`},
		refuse:       []string{`{"p": ["a", 1, 2]}`, `{"p": [1]}`, `{"p": ["a", "b"]}`},
		llamaDiffers: "llama.cpp requires every prefix item",
	},
	{
		name:         "prefixItems then items",
		schema:       `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"boolean"},"minItems":2}},"required":["p"]}`,
		accept:       []string{`{"p": ["a", true]}`, `{"p": ["a", true, false]}`},
		refuse:       []string{`{"p": ["a"]}`, `{"p": []}`, `{"p": ["a", 1]}`, `{"p": [true, true]}`},
		llamaDiffers: "llama.cpp ignores items after prefixItems",
	},
	{
		name:   "anyOf",
		schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string","maxLength":2},{"type":"integer"},{"type":"array","items":{"type":"boolean"}}]}},"required":["v"]}`,
		accept: []string{`{"v": "ab"}`, `{"v": 7}`, `{"v": [true]}`, `{"v": []}`},
		refuse: []string{`{"v": "abc"}`, `{"v": 1.5}`, `{"v": [1]}`, `{"v": null}`},
	},
	{
		name:         "type list and nullable",
		schema:       `{"type":"object","properties":{"a":{"type":["string","null"],"maxLength":1},"b":{"type":"integer","nullable":true}},"required":["a","b"]}`,
		accept:       []string{`{"a": null, "b": null}`, `{"a": "x", "b": 3}`},
		refuse:       []string{`{"a": "xy", "b": 3}`, `{"a": 1, "b": null}`, `{"a": null, "b": "3"}`},
		llamaDiffers: "llama.cpp ignores nullable",
	},
	{
		name:   "const and mixed enum",
		schema: `{"type":"object","properties":{"c":{"const":"fixed"},"e":{"enum":["a",1,null,true,{"k":[1,2]}]}},"required":["c","e"]}`,
		accept: []string{`{"c": "fixed", "e": "a"}`, `{"c": "fixed", "e": 1}`, `{"c": "fixed", "e": null}`, `{"c": "fixed", "e": true}`, `{"c": "fixed", "e": {"k":[1,2]}}`},
		refuse: []string{`{"c": "other", "e": "a"}`, `{"c": "fixed", "e": 2}`, `{"c": "fixed", "e": false}`, `{"c": "fixed", "e": "b"}`},
	},
	{
		name:   "enum filtered by type",
		schema: `{"type":"object","properties":{"e":{"type":"string","enum":["a",1]}},"required":["e"]}`,
		accept: []string{`{"e": "a"}`},
		refuse: []string{`{"e": 1}`},
		// llama.cpp keeps every enum value whatever the type.
		llamaDiffers: "llama.cpp keeps enum values of other types",
	},
	{
		name:   "recursive $ref",
		schema: `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string","maxLength":4},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}},"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"required":["root"]}`,
		accept: []string{`{"root": {"name": "a"}}`, `{"root": {"name": "a", "kids": [{"name": "b", "kids": []}, {"name": "c"}]}}`},
		refuse: []string{`{"root": {"kids": []}}`, `{"root": {"name": "a", "kids": [{"name": "toolong"}]}}`, `{"root": {"name": "a", "kids": [1]}}`},
	},
	{
		name:   "definitions $ref",
		schema: `{"definitions":{"color":{"enum":["red","green"]}},"type":"object","properties":{"fg":{"$ref":"#/definitions/color"}},"required":["fg"]}`,
		accept: []string{`{"fg": "red"}`},
		refuse: []string{`{"fg": "blue"}`},
	},
	{
		name:   "pydantic allOf wrapper",
		schema: `{"$defs":{"Mode":{"enum":["fast","slow"],"type":"string"}},"properties":{"mode":{"allOf":[{"$ref":"#/$defs/Mode"}],"description":"how"}},"required":["mode"],"type":"object"}`,
		accept: []string{`{"mode": "fast"}`},
		refuse: []string{`{"mode": "medium"}`},
		// llama.cpp reads allOf as an object merge.
		llamaDiffers: "llama.cpp merges allOf members as objects",
	},
	{
		name:         "any value property",
		schema:       `{"type":"object","properties":{"v":{}},"required":["v"]}`,
		accept:       []string{`{"v": 1}`, `{"v": "x"}`, `{"v": [null, {"a": false}]}`},
		refuse:       []string{`{"v": }`, `{}`},
		llamaDiffers: "llama.cpp reads {} as any object",
	},
	{
		name:   "unicode and escaped keys",
		schema: `{"type":"object","properties":{"日本":{"type":"boolean"},"q\"k":{"type":"boolean"}},"required":["日本","q\"k"]}`,
		accept: []string{`{"日本": true, "q\"k": false}`},
		refuse: []string{`{"日本": true}`, `{"日本": true, "qk": false}`},
	},
	{
		name:   "nested objects",
		schema: `{"type":"object","properties":{"to":{"type":"object","properties":{"email":{"type":"string","maxLength":10},"cc":{"type":"array","items":{"type":"string"},"maxItems":2}},"required":["email"]},"urgent":{"type":"boolean"}},"required":["to"]}`,
		accept: []string{`{"to": {"email": "a@b.c"}}`, `{"to": {"email": "a@b.c", "cc": ["x"]}, "urgent": true}`},
		refuse: []string{`{"to": {"cc": []}}`, `{"to": {"email": "a@b.c", "cc": ["x", "y", "z"]}}`, `{"urgent": true}`},
	},
	{
		name:         "unsupported keywords widen",
		schema:       `{"type":"object","properties":{"p":{"type":"string","pattern":"^a+$"},"n":{"type":"integer","minimum":10}},"required":["p","n"]}`,
		accept:       []string{`{"p": "bbb", "n": 3}`, `{"p": "a", "n": 10}`},
		refuse:       []string{`{"p": 1, "n": 3}`},
		llamaDiffers: "llama.cpp renders pattern and integer bounds",
	},
	{
		name:         "left recursion admits any value",
		schema:       `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"type":"integer"}]},"b":{"$ref":"#/$defs/a"}},"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"required":["x"]}`,
		accept:       []string{`{"x": 1}`, `{"x": "s"}`},
		refuse:       []string{`{}`},
		llamaDiffers: "llama.cpp refuses left recursion",
	},
	{
		name:   "no parameters",
		schema: `null`,
		accept: []string{`{}`, `{"a": 1}`},
		refuse: []string{`[]`, `1`},
		// llama.cpp has no schema to read.
		llamaDiffers: "no schema",
	},
}
