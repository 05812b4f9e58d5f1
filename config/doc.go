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
//
// Limits have defaults that keep one gateway safe in front of many clients and a
// misbehaving upstream, each overridable:
//
//	server.read_header_timeout  10s    headers must be in within it
//	server.body_timeout         10s    a body must be in within body_timeout +
//	server.min_body_rate        64KiB    size / min_body_rate (per second), else 408
//	server.write_timeout        30s    a client that takes no bytes that long is cut,
//	                                     its upstream request cancelled
//	server.keepalive_timeout    75s    an idle keep-alive connection is closed
//	server.max_header_bytes     64KiB  larger headers get 431
//	server.max_connections      4096   more connections wait to be accepted
//	server.trusted_proxies      []     TLS-terminating proxies whose X-Forwarded-Proto counts
//	server.shutdown_grace       25s    requests in flight may finish after SIGTERM
//	server.keepalive_interval   15s    a begun stream silent that long gets a keep-alive
//	                                     (at least 1s, or off)
//	server.early_events         on     Responses and Messages streams open when admitted
//	max_request_bytes           16MiB  larger bodies get 413
//	backends[].timeout          10m    to the first byte of an answer (504)
//	backends[].idle_timeout     60s    between an answer's bytes once begun (504 or an error event)
//	backends[].max_response_bytes 64MiB a whole answer, or a tool loop's streamed round (502)
//	backends[].max_event_bytes  8MiB   one stream event, its lines together (502 or an error event)
//	doors.store_bytes           64MiB  stored responses, oldest out first
//	doors.store_ttl             1h     a stored response is kept that long
//	doors.history_bytes         32MiB  one chain of responses' conversation (400 history_too_large)
//	doors.websocket.max_message_bytes 16MiB a client message (close 1009)
//	doors.websocket.send_queue_bytes  8MiB  events queued for a slow reader (close 1008)
//	doors.websocket.ping_interval     20s   a client silent twice as long is dropped
//	doors.websocket.idle_timeout      10m   a socket with nothing to do is closed
package config
