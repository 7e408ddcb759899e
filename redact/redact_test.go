package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBytesRedactsCredentials(t *testing.T) {
	for _, c := range []struct {
		name, in, secret, kind string
	}{
		{"genai-perf header", `"header": ["Authorization: Bearer sk-proj-AbCdEf0123456789xyzXYZ"],`, "sk-proj-AbCdEf0123456789xyzXYZ", "authorization header"},
		{"json authorization", `{"authorization": "Bearer abcdefgh12345678"}`, "abcdefgh12345678", "authorization header"},
		{"bare bearer", `curl -H 'X: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig'`, "eyJhbGciOiJIUzI1NiJ9.payload.sig", "bearer token"},
		{"api_key field", `{"api_key": "my-private-key-1234"}`, "my-private-key-1234", "credential field"},
		{"env var", "OPENAI_API_KEY=abcd1234efgh5678\n", "abcd1234efgh5678", "credential field"},
		{"cli flag", `--api-key s3cr3tvalue99 --model x`, "s3cr3tvalue99", "credential flag"},
		{"hf token field", `"hf_token": "hf_abcdefghijklmnopqrstuvwxyz1234"`, "hf_abcdefghijklmnopqrstuvwxyz1234", "credential field"},
		{"sk key in text", `the key sk-ant-api03-abcdefghijklmnopqrstu leaked`, "sk-ant-api03-abcdefghijklmnopqrstu", "sk- key"},
		{"hf key in text", `token=hf_ABCDEFGHIJKLMNOPQRSTUVWXYZ12`, "hf_ABCDEFGHIJKLMNOPQRSTUVWXYZ12", "credential field"},
		{"nvapi", `"x": "nvapi-abcdefghijklmnopqrstuvwxyz"`, "nvapi-abcdefghijklmnopqrstuvwxyz", "nvapi- key"},
		{"escaped json in json", `{"response": "{\"api_key\": \"abcdefgh12345678\"}"}`, "abcdefgh12345678", "credential field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, found := String(c.in)
			if strings.Contains(out, c.secret) {
				t.Fatalf("secret kept: %s", out)
			}
			if len(found) == 0 || found[0].Kind != c.kind || found[0].Line != 1 {
				t.Errorf("findings %+v, want one %q on line 1", found, c.kind)
			}
		})
	}
}

// What benchmark files legitimately hold must not be touched.
func TestBytesLeavesBenchmarkFieldsAlone(t *testing.T) {
	for _, in := range []string{
		`{"time_to_first_token": {"value": 12881.482693, "unit": "ms"}, "max_tokens": 256, "total_token_throughput": 29.4}`,
		`{"tokenizer": {"name": "Qwen/Qwen3-VL-30B-A3B-Instruct"}, "use_server_token_count": true}`,
		`{"token": 1234567890, "api_key": "EMPTY", "password": null}`,
		`{"x_request_id": "4d7ab1cb-93b5-4e6c-9ba3-458b565a4c3e", "sk": 3}`,
		`aiperf profile --model 'Qwen3' --url 'https://poppy-zero-ritzy.ngrok-free.dev' --streaming`,
		`"header": "Output Token Throughput Per User",`,
		"Inter Token Latency (ms),27.76,22.13\nOutput Token Throughput Per User (tokens/sec/user),36.68",
	} {
		out, found := String(in)
		if out != in || len(found) != 0 {
			t.Errorf("%s\nchanged to %s (%+v)", in, out, found)
		}
	}
}

func TestBytesKeepsJSONValid(t *testing.T) {
	in := `{"input_config": {"header": ["Authorization: Bearer sk-abcdefghijklmnopqrstuvwx"], "api_key": "abcdefgh12345678"},` + "\n" + `"n": 1}`
	out, found := String(in)
	if !json.Valid([]byte(out)) {
		t.Fatalf("not JSON after redaction: %s", out)
	}
	if len(found) != 2 || found[1].Line != 1 {
		t.Errorf("findings %+v", found)
	}
}

func FuzzBytes(f *testing.F) {
	f.Add([]byte(`{"header": "Authorization: Bearer sk-abcdefghijklmnopqrstuvwx", "api_key": "abcdefgh12345678"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, found := Bytes(data)
		if len(found) == 0 && string(out) != string(data) {
			t.Fatal("changed without a finding")
		}
		if again, more := Bytes(out); len(more) != 0 || string(again) != string(out) {
			t.Fatalf("not idempotent: %q → %q (%+v)", out, again, more)
		}
	})
}
