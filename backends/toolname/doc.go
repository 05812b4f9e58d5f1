// Package toolname maps tool names to the names a backend's API accepts, and back.
//
// OpenAI and Anthropic accept only names matching ^[a-zA-Z0-9_-]{1,64}$, so a
// namespaced catalog name such as "git.commit" is a 400 there. Self-hosted engines
// see the real names; a black-box API sees a wire name, and its answers are mapped
// back before the client sees them.
//
// A wire name is a function of the real name alone, never of the rest of the catalog:
// loading one more tool must not rename the others, or the prompt prefix would move.
// A valid name is its own wire name; any other is the name with each refused byte
// replaced by '_', cut to fit, and suffixed with eight hex digits of its SHA-256, so
// two real names that sanitize alike still differ on the wire. Map refuses a set in
// which two names still collide.
//
// The package must never guess: a wire name it did not produce maps back to itself.
package toolname
