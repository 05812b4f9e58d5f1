package oai

import "testing"

func TestParseErrorBody_AcceptsTheShapesEnginesSend(t *testing.T) {
	tests := []struct{ name, body, msg, param, code string }{
		{"openai", `{"error":{"message":"bad","type":"invalid_request_error","param":"model","code":"x"}}`, "bad", "model", "x"},
		{"ollama", `{"error":"model not found"}`, "model not found", "", ""},
		{"llama.cpp numeric code", `{"error":{"code":400,"message":"too long","type":"exceed_context_size_error"}}`, "too long", "", "400"},
		{"vllm detail", `{"detail":"Not Found"}`, "Not Found", "", ""},
		{"plain message", `{"message":"nope"}`, "nope", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := ParseErrorBody([]byte(tt.body))
			if !ok || d.Message != tt.msg || str(d.Param) != tt.param || str(d.Code) != tt.code {
				t.Errorf("got %+v ok=%v", d, ok)
			}
		})
	}
	if _, ok := ParseErrorBody([]byte(`<html>502</html>`)); ok {
		t.Error("HTML accepted as an error body")
	}
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
