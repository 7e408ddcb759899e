package aiperf

import (
	"encoding/json"

	"github.com/benchseal/benchseal/importer/ingest"
)

// Stats is one metric's block in profile_export_aiperf.json.
type Stats struct {
	Unit string `json:"unit"`
	// Values maps avg, min, max, p1…p99, std, count, sum to their values.
	Values map[string]json.Number `json:"-"`
}

// Summary is profile_export_aiperf.json in either schema: metric blocks
// under "records" (2025 development schema) or at the top level (1.x).
type Summary struct {
	SchemaVersion string `json:"schema_version"`
	AIPerfVersion string `json:"aiperf_version"`
	BenchmarkID   string `json:"benchmark_id"`
	StartTime     string `json:"start_time"`
	EndTime       string `json:"end_time"`
	WasCancelled  bool   `json:"was_cancelled"`
	InputConfig   struct {
		Endpoint struct {
			ModelNames []string `json:"model_names"`
			Type       string   `json:"type"`
			Streaming  *bool    `json:"streaming"`
			URL        string   `json:"url"`
			URLs       []string `json:"urls"`
		} `json:"endpoint"`
		// Models, Datasets and Phases are the schema 1.3 (AIPerf 0.10)
		// layout; the model is models.items[0].name.
		Models *struct {
			Items []struct {
				Name string `json:"name"`
			} `json:"items"`
		} `json:"models"`
		Datasets []struct {
			Name       string      `json:"name"`
			Type       string      `json:"type"`
			Dataset    string      `json:"dataset"`
			Path       string      `json:"path"`
			Format     string      `json:"format"`
			Entries    json.Number `json:"entries"`
			RandomSeed json.Number `json:"random_seed"`
		} `json:"datasets"`
		Phases    []Phase `json:"phases"`
		Tokenizer struct {
			Name     string `json:"name"`
			Revision string `json:"revision"`
		} `json:"tokenizer"`
		Input struct {
			Prompt struct {
				InputTokens struct {
					Mean json.Number `json:"mean"`
				} `json:"input_tokens"`
				OutputTokens struct {
					Mean json.Number `json:"mean"`
				} `json:"output_tokens"`
			} `json:"prompt"`
			RandomSeed json.Number `json:"random_seed"`
			// File, PublicDataset and CustomDatasetType name the
			// dataset (schema ≤ 1.0: --input-file, --public-dataset,
			// --custom-dataset-type).
			File              string `json:"file"`
			PublicDataset     string `json:"public_dataset"`
			CustomDatasetType string `json:"custom_dataset_type"`
		} `json:"input"`
		Loadgen struct {
			Concurrency     json.Number `json:"concurrency"`
			RequestRate     json.Number `json:"request_rate"`
			RequestRateMode string      `json:"request_rate_mode"`
			ArrivalPattern  string      `json:"arrival_pattern"`
			RequestCount    json.Number `json:"request_count"`
			WarmupRequests  json.Number `json:"warmup_request_count"`
			// BenchmarkDuration (s) bounds a time-based run
			// (--benchmark-duration); GracePeriod (s) is how long AIPerf
			// then waits for requests in flight.
			BenchmarkDuration json.Number `json:"benchmark_duration"`
			GracePeriod       json.Number `json:"benchmark_grace_period"`
		} `json:"loadgen"`
		CLICommand string `json:"cli_command"`
	} `json:"input_config"`
	RunInfo *struct {
		RandomSeed json.Number `json:"random_seed"`
		CLICommand string      `json:"cli_command"`
		RunLabel   string      `json:"run_label"`
	} `json:"run_info"`
	TelemetryData *struct {
		Endpoints map[string]struct {
			GPUs map[string]struct {
				GPUName string `json:"gpu_name"`
			} `json:"gpus"`
		} `json:"endpoints"`
	} `json:"telemetry_data"`
	// Metrics maps metric tags to their statistics.
	Metrics map[string]Stats `json:"-"`
}

func parseSummary(data []byte, name string) (*Summary, error) {
	var s Summary
	if err := ingest.DecodeJSON(name, data, &s); err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := ingest.DecodeJSON(name, data, &top); err != nil {
		return nil, err
	}
	blocks := top
	if rec, ok := top["records"]; ok {
		blocks = nil
		if err := ingest.DecodeJSON(name, rec, &blocks); err != nil {
			return nil, err
		}
	}
	s.Metrics = map[string]Stats{}
	for tag, raw := range blocks {
		if len(raw) == 0 || raw[0] != '{' {
			continue
		}
		var m map[string]json.RawMessage
		if err := ingest.DecodeJSON(name, raw, &m); err != nil {
			return nil, err
		}
		unitRaw, ok := m["unit"]
		if !ok {
			continue // not a metric block (input_config, run_info, ...)
		}
		if _, hasAvg := m["avg"]; !hasAvg {
			continue
		}
		var st Stats
		if err := json.Unmarshal(unitRaw, &st.Unit); err != nil {
			return nil, ingest.RecordErrorf(name, 0, -1, tag+".unit", "not a string")
		}
		st.Values = map[string]json.Number{}
		for k, v := range m {
			if k == "unit" || k == "tag" || k == "header" {
				continue
			}
			var n *json.Number
			if err := ingest.DecodeJSON(name, v, &n); err != nil {
				continue // non-numeric field
			}
			if n != nil {
				st.Values[k] = *n
			}
		}
		s.Metrics[tag] = st
	}
	if len(s.Metrics) == 0 {
		return nil, ingest.Errorf(name, "no metric blocks: not an AIPerf profile_export_aiperf.json")
	}
	return &s, nil
}
