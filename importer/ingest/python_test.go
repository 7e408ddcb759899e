package ingest

import "testing"

func TestQuotePythonLiterals(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"request_rate": Infinity, "x": 1}`, `{"request_rate": "Infinity", "x": 1}`},
		{`{"a": -Infinity}`, `{"a": "-Infinity"}`},
		{`[NaN,NaN, NaN ]`, `["NaN","NaN", "NaN" ]`},
		{`{"s": "Infinity and NaN", "t": "say \"NaN\", Infinity"}`, `{"s": "Infinity and NaN", "t": "say \"NaN\", Infinity"}`},
		{`{"a": NaNa}`, `{"a": NaNa}`},
		{`{"a": 1}`, `{"a": 1}`},
		{`{"Infinity": 2}`, `{"Infinity": 2}`},
		{`Infinity`, `"Infinity"`},
	} {
		if got := string(QuotePythonLiterals([]byte(c.in))); got != c.want {
			t.Errorf("QuotePythonLiterals(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzQuotePythonLiterals(f *testing.F) {
	f.Add([]byte(`{"request_rate": Infinity, "l": [NaN, -Infinity], "s": "NaN\"Infinity"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := QuotePythonLiterals(data)
		if len(out) < len(data) {
			t.Fatalf("output shorter than input")
		}
	})
}
