// Package policy owns the semantics of filter rules: which tools a request may find,
// load and call. Config reads the rules from YAML; this package compiles and evaluates
// them, and never reads files, headers or bodies itself.
//
// # Phases
//
//   - search: the tool is left out of search_tools results.
//   - load: a load_tool naming it is refused.
//   - active: a tool already loaded in the thread is not callable in this request (it
//     stays loaded, so a later request the rule does not match can use it).
//
// # Rules
//
// Every rule denies. A tool is denied in a phase when any rule that names the phase
// matches the request and the tool; there is no allow and no ordering, so adding a rule
// can only narrow what is allowed. A rule matches when all of the conditions it sets hold:
//
//   - profiles: the request's profile matches one of the globs;
//   - headers: for each entry, the request has the header and one of its values matches
//     the glob (an empty value: the header is present); a missing header is no match;
//   - metadata: for each entry, the request's metadata has the key and its value matches
//     (an empty value: the key is present); a missing key is no match;
//   - tools and namespaces: the tool's name matches one of tools, or its namespace one
//     of namespaces. With neither set, the rule covers every tool;
//   - when: the condition (a Cond) holds for the request.
//
// A condition that is not set holds. Globs match the whole string: '*' any run of
// characters, '?' one character, '[a-z]' and '[!a-z]' classes, '\' escapes; a glob without
// these is an exact match. Matching is case-sensitive, except header names.
//
// # Conditions
//
// A Cond is a tree. A leaf reads one field of the request and applies one operator:
//
//   - fields: key (the caller's identity name), profile, header.NAME (NAME in any case),
//     metadata.NAME (NAME exact);
//   - operators: equals (the value is the one given), in (it is one of those given),
//     prefix (it starts with the one given), exists (it is present, even if empty).
//
// Comparisons are exact and case-sensitive: conditions have no globs. A header may carry
// several values (one per header line, not split at commas); a leaf over it holds when
// any value satisfies it. A node combines: all (every child holds), any (one does), not
// (its child does not).
//
// A leaf on a missing field is false, whatever the operator: a header or metadata key
// the request does not have, or a key or profile that is empty. So "not" of it is true:
// with when: {not: {field: metadata.plan, equals: pro}} a rule denies every request whose
// plan is not pro, and a request with no plan at all. That is "deny unless the plan is
// pro": an allow-list, written in a policy that only denies.
//
// # A rule that errors denies
//
// At start-up, Compile rejects a rule it cannot evaluate (unknown phase, no phase, a bad
// glob, a malformed condition), naming it: "rules[2].tools[0]: ...",
// "rules[0].when.all[1].field: ...". At run time the only thing that can fail is the
// request's metadata: when it is not a JSON object of string values
// (Request.MetadataErr is set), a metadata condition cannot be decided, and it is taken to
// hold. So a rule with metadata conditions denies in that request whenever its other
// conditions hold; rules without metadata conditions are unaffected. Missing headers and
// keys are not errors: they are facts, and simply do not match.
//
// In a when condition, an undecidable metadata leaf makes the answer unknown, and unknown
// spreads only as far as it matters: not of unknown is unknown; all is false if any child
// is false, else unknown if any is unknown; any is true if any child is true, else unknown
// if any is unknown. A rule whose when is unknown denies. Other callers of Cond.Eval get
// the error and decide for themselves what unknown means.
//
// # Never
//
// No package state; a Policy is immutable and safe for concurrent use.
package policy
