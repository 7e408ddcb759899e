package schema

import "strings"

// A PeerTool is the one registration of a peer benchmark tool: the facts
// about it that hold whichever package reads them. The tool's importer
// (importer.Importer.Tool) and its metric definitions (replay's
// Definition.Tool) point to the same *PeerTool value, so nothing joins
// them by an equal string; the contract tests in importer walk PeerTools
// and fail when a tool lacks its importer, definitions, fixture, fuzz
// target or a row of a per-tool test table.
type PeerTool struct {
	// Name is the tool's name on the command line (import TOOL,
	// --definitions), in manifest source.tool and in claims.
	Name string
	// WindowFromRate names the reported rate the tool's stored windows
	// (ToolWindow) are derived from, "" when they are a time the tool
	// measured: such a window is a count ÷ that rate, so a rate
	// recomputed over it restates the tool's own rate and checks nothing.
	WindowFromRate string
	// Records is false for a tool whose import references external
	// evidence without per-request records (MLPerf's logs).
	Records bool
	// Fixture lists the files of one import of a real output of the
	// tool, relative to testdata/fixtures/Name.
	Fixture []string
	// FixtureSource says where Fixture came from: the repository, commit
	// and path of the real files, or how hand-written ones were made
	// (testdata/README.md describes the runs and lists the other
	// fixtures).
	FixtureSource string
	// ExtraDists are the distributions the tool's metric definitions add
	// to the canonical ones (ClaimDistNames), which a claim under them may
	// name; replay computes each.
	ExtraDists []string
	// KeepsFirst is true when replay still computes the rules of the
	// tool's FirstRelease definitions version (a claims file may name
	// it), false when they were changed before claims files named
	// versions and no claims file names it (DefinitionsVersions).
	KeepsFirst bool
	// OwnNames are the tool's own field or metric names that spell one
	// of benchseal's metric names or SLO limits ("request_throughput",
	// "ttft"): they stay what the tool writes whatever benchseal calls its
	// metrics, so the tool's importer package (importer/ and Name without
	// '-') and its definitions (replay/def_ and Name without '-' .go) may
	// write them as literals (internal/archtest, TestNoMetricNameLiterals
	// and TestNoSLOKeyLiterals), and must use each.
	OwnNames []string
}

// The peer tools benchseal imports and whose metric definitions replay
// reproduces.
var (
	AIPerf = &PeerTool{Name: "aiperf", Records: true,
		Fixture:       []string{"run1_profile_export.jsonl", "run1_profile_export_aiperf.json", "run1_profile_export_aiperf.csv"},
		ExtraDists:    []string{"time_to_second_token_ns", "output_token_throughput_per_user", "input_sequence_length", "output_sequence_length"},
		FixtureSource: "ai-dynamo/aiperf @ 7c31f57933ad8a452db7737d05dba2b29cd6bf8c, examples/artifacts/run1/profile_export.jsonl, profile_export_aiperf.json and profile_export_aiperf.csv, saved with a run1_ prefix (NVIDIA AIPerf, early-October-2025 development schema)",
		OwnNames:      []string{"request_throughput", "output_token_throughput", "total_token_throughput", "goodput", "output_token_throughput_per_user", "ttft"}}
	GenAIPerf = &PeerTool{Name: "genai-perf", Records: true,
		Fixture:       []string{"profile_export.json", "profile_export_genai_perf.json"},
		FixtureSource: "hand-written by testdata/fixtures/handwritten.py in the tool's documented format (testdata/README.md, hand-written files)",
		OwnNames:      []string{"request_throughput", "output_token_throughput", "request_throughput.avg", "output_token_throughput.avg"}}
	VLLM = &PeerTool{Name: "vllm", Records: true, KeepsFirst: true,
		Fixture:       []string{"lambdalabs_llama3_8b_h100_prompt10.json"},
		FixtureSource: "LambdaLabsML/vllm-benchmark @ a4f9f4371a1ccac781293837fce2bce0cc6d25cc, results/prompt_10/1xH100-80GB-SXM/Meta-Llama-3-8B-Instruct_tp1_len2048.json, saved as lambdalabs_llama3_8b_h100_prompt10.json (vLLM benchmark_serving.py, 2024)",
		OwnNames:      []string{"request_throughput", "total_token_throughput", "ttft", "tpot"}}
	SGLang = &PeerTool{Name: "sglang", Records: true, KeepsFirst: true,
		Fixture:       []string{"sglang_0101_12_256_64.jsonl"},
		FixtureSource: "hand-written by testdata/fixtures/handwritten.py in the tool's documented format (testdata/README.md, hand-written files)",
		OwnNames:      []string{"request_throughput", "ttft", "tpot"}}
	GuideLLM = &PeerTool{Name: "guidellm", Records: true, KeepsFirst: true,
		Fixture:       []string{"qwen3_4b_concurrent_benchmarks.json"},
		ExtraDists:    []string{"time_per_output_token_ns", "requests_per_second", "output_tokens_per_second", "tokens_per_second", "prompt_tokens_per_second"},
		FixtureSource: "danielkorat/guidellm-bench @ 8f24116d0d1b21073be686c2cce9d796f5c1b59e, guidellm_sanity_results/20260302_1856/Qwen_Qwen3-4B-Thinking-2507_tp4_quant-fp8_benchmarks.json, saved as qwen3_4b_concurrent_benchmarks.json (GuideLLM 0.5.0.dev0)"}
	// LLMPerf stores no run start or end; its window is
	// results_num_completed_requests ÷ results_num_completed_requests_per_min
	// × 60 s.
	LLMPerf = &PeerTool{Name: "llmperf", Records: true, WindowFromRate: "results_num_completed_requests_per_min",
		Fixture:       []string{"groq_70b_individual_responses.json", "groq_70b_summary.json"},
		ExtraDists:    []string{"inter_token_latency_ns", "request_output_throughput_token_per_s", "number_input_tokens", "number_output_tokens"},
		FixtureSource: "ray-project/llmperf-leaderboard @ 27aa9b6a6c4282f6d5599b9199fbb57256a2dcd8, raw_data/individual/groq_70b.json and raw_data/summary/groq_70b.json, saved as groq_70b_individual_responses.json and groq_70b_summary.json (LLMPerf, results version 2023-08-31)"}
	InferencePerf = &PeerTool{Name: "inference-perf", Records: true,
		Fixture:       []string{"per_request_lifecycle_metrics.json", "stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json", "summary_lifecycle_metrics.json"},
		ExtraDists:    []string{"normalized_time_per_output_token_ns"},
		FixtureSource: "hand-written by testdata/fixtures/handwritten.py in the tool's documented format (testdata/README.md, hand-written files)"}
	MLPerf = &PeerTool{Name: "mlperf",
		Fixture:       []string{"closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99.9/Interactive/performance/run_1/mlperf_log_summary.txt", "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99.9/Interactive/performance/run_1/mlperf_log_detail.txt"},
		FixtureSource: "mlcommons/inference @ ee809ab3c3f90a38dc570a5225adb99d5e5a88fd, tools/submission/directory_structure_samples/sample_1/, kept in its submission layout from closed/ down so that the importer reads division, submitter, system and benchmark from the path (MLPerf Inference LoadGen 5.1.0 logs)"}
)

// PeerTools lists every peer tool, in the order replay lists their
// definitions (after benchseal's; replay's registry sorts the
// definitions each def_TOOL.go registers in this order). Adding one means a value above and a line here; the
// contract tests then name what else it lacks.
var PeerTools = []*PeerTool{AIPerf, VLLM, SGLang, GuideLLM, LLMPerf, MLPerf, GenAIPerf, InferencePerf}

// LookupPeerTool returns the peer tool of a name (manifest source.tool,
// a command line's tool), matched without regard to case.
func LookupPeerTool(name string) (*PeerTool, bool) {
	for _, t := range PeerTools {
		if t.Name == strings.ToLower(name) {
			return t, true
		}
	}
	return nil, false
}
