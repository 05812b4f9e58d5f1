// Package respstore keeps the Responses API's stored responses (store: true), for
// previous_response_id, GET and DELETE /v1/responses/{id} and its input_items (each
// response keeps its request's input items, WithInput): in this process's memory
// (Store: per identity, a TTL and a byte bound, a chain's shared history counted once),
// or as gateway/store records shared by gateways or kept across restarts (each response
// a record holding what it added to its chain, SetRecords).
//
// A response is its owner's: another identity's is as absent as one never made. It
// keeps the client's and the engine's JSON bytes as they were.
//
// It must never decide what a response holds (the Responses door does), read a request,
// or write to a client; a store that fails is Unavailable, never a response silently
// forgotten.
package respstore
