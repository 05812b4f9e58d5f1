// Package config reads and validates the gateway's YAML configuration.
//
// Validation happens once, at start-up: every problem is reported as one error naming the
// file, the line and the key path ("gateway.yaml:7: backends[0].url: ..."), so the
// operator can fix it without guessing. Unknown keys are errors, because a misspelt key
// that is silently ignored is a setting the operator believes in and does not have.
//
// The package never reads secrets: backends name an environment variable (api_key_env)
// and the caller resolves it; client keys are written as their SHA-256 (key_hash) or
// name a variable (key_env), and a key_hash that is not a hash is refused without being
// echoed, since it may be the key itself.
package config
