package responses

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/maskgate/maskgate/backends/oai"
	"github.com/maskgate/maskgate/gateway/door"
)

// sse is door.Events over an http.ResponseWriter, as a door writes them.
type sse struct{ w http.ResponseWriter }

func (s sse) Event(name string, data []byte) error {
	if _, err := io.WriteString(s.w, "event: "+name+"\ndata: "+string(data)+"\n\n"); err != nil {
		return err
	}
	s.w.(http.Flusher).Flush()
	return nil
}

// TestSDK puts the official Go SDK in front of the door: what it sends decodes, and what
// the Writer answers, whole or streamed, it reads.
func TestSDK(t *testing.T) {
	var chat []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, derr := Decode(body, Options{})
		if derr != nil {
			w.WriteHeader(derr.Status)
			_, _ = w.Write(ErrorBody(*derr))
			return
		}
		chat = req.ChatBody(nil)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			wr := NewWriter(sse{w}, true, "resp_sdk", req)
			if err := play(wr); err != nil {
				t.Error(err)
			}
			return
		}
		wr := NewWriter(nil, false, "resp_sdk", req)
		if err := play(wr); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wr.Body())
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	ctx := context.Background()

	params := responses.ResponseNewParams{
		Model:        "qwen",
		Instructions: openai.String("Be brief."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("What's the weather in Paris?", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfFunctionCall(`{"city":"Paris"}`, "call_0", "get_weather"),
			responses.ResponseInputItemParamOfFunctionCallOutput("sunny"),
		}},
		Tools: []responses.ToolUnionParam{
			{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Parameters: map[string]any{"type": "object"}}},
			{OfCustom: &responses.CustomToolParam{Name: "patch"}},
			{OfNamespace: &responses.NamespaceToolParam{Name: "crm", Description: "CRM", Tools: []responses.NamespaceToolToolUnionParam{
				{OfFunction: &responses.NamespaceToolToolFunctionParam{Name: "lookup"}}}}},
			{OfToolSearch: &responses.ToolSearchToolParam{Execution: responses.ToolSearchToolExecutionClient}},
		},
	}
	// The SDK's function_call_output needs its call id.
	params.Input.OfInputItemList[2].OfFunctionCallOutput.CallID = openai.String("call_0")

	resp, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ID != "resp_sdk" || resp.OutputText() != "Hello, world!" || len(resp.Output) != 8 || resp.Status != "completed" {
		t.Errorf("whole: %s", resp.RawJSON())
	}
	env, err := oai.ParseEnvelope(chat)
	if err != nil {
		t.Fatalf("chat body %s: %v", chat, err)
	}
	if len(env.Messages) != 4 || !strings.Contains(string(chat), `"tool_calls":[{"id":"call_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`) {
		t.Errorf("chat body %s", chat)
	}
	var names []string
	for _, s := range mustSchemas(t, env.Tools) {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "get_weather,patch,crm.lookup,tool_search" {
		t.Errorf("chat tools %q", names)
	}

	stream := client.Responses.NewStreaming(ctx, params)
	var types []string
	var final responses.Response
	text := ""
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		switch e := ev.AsAny().(type) {
		case responses.ResponseTextDeltaEvent:
			text += e.Delta
		case responses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text != "Hello, world!" || final.ID != "resp_sdk" || len(final.Output) != 8 || final.Usage.TotalTokens != 120 || len(types) != 43 {
		t.Errorf("stream: text %q, %d events, final %s", text, len(types), final.RawJSON())
	}

	// A request the door refuses comes back as the SDK's API error.
	bad := params
	bad.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		{OfItemReference: &responses.ResponseInputItemItemReferenceParam{ID: "msg_1"}}}}
	_, err = client.Responses.New(ctx, bad)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "input[0].id" {
		t.Errorf("item_reference: %v (param %q)", err, apiErr.Param)
	}
}

// TestSDKStreamError: an error mid-stream ends the SDK's stream with the failed response
// readable before it.
func TestSDKStreamError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := Decode(body, Options{})
		w.Header().Set("Content-Type", "text/event-stream")
		wr := NewWriter(sse{w}, true, "resp_err", req)
		_ = wr.Begin(door.Head{Model: "qwen", Created: created})
		_ = wr.Text("partial")
		wr.Fail(door.Error{Status: 502, Type: "upstream_error", Message: "engine died"})
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "qwen",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
	var types []string
	failed := ""
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if e, ok := ev.AsAny().(responses.ResponseFailedEvent); ok {
			failed = e.Response.Error.Message
		}
		if e, ok := ev.AsAny().(responses.ResponseErrorEvent); ok && e.Message != "engine died" {
			t.Errorf("error event %+v", e)
		}
	}
	if types[len(types)-2] != "error" || types[len(types)-1] != "response.failed" || failed != "engine died" {
		t.Errorf("events %q (err %v), failed %q", types, stream.Err(), failed)
	}
}
