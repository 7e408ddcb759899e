package servermetrics

// ProcessStartMetric is the standard Prometheus process collector's gauge
// of the process's start time in Unix seconds (vLLM and SGLang expose it
// through prometheus_client on Linux).
const ProcessStartMetric = "process_start_time_seconds"

// Served is what one scrape says the engine had served since it started.
type Served struct {
	Engine string
	// Requests and PromptTokens are the engine's totals of finished
	// requests and of prompt tokens (RoleRequestSuccess,
	// RolePromptTokens), summed over their series.
	Requests, PromptTokens float64
	// ProcessStart is process_start_time_seconds; HaveStart says whether
	// the scrape had it.
	ProcessStart float64
	HaveStart    bool
}

// Fresh reports whether the engine had served nothing: no finished
// request and no prompt token.
func (s Served) Fresh() bool { return s.Requests == 0 && s.PromptTokens == 0 }

// ServedBefore reads from one scrape what the engine had served; ok is
// false when the scrape names no known engine or lacks either counter
// (an engine that creates its series on first use cannot tell a fresh
// start from a missing metric).
func ServedBefore(s *Snapshot) (Served, bool) {
	out := Served{Engine: DetectEngine(s)}
	if out.Engine == "" {
		return out, false
	}
	for _, role := range []string{RoleRequestSuccess, RolePromptTokens} {
		n, ok := Lookup(out.Engine, role)
		if !ok {
			return out, false
		}
		f, ok := s.lookup(n)
		if !ok || f.Bad != "" {
			return out, false
		}
		if role == RoleRequestSuccess {
			out.Requests = f.Sum
		} else {
			out.PromptTokens = f.Sum
		}
	}
	if f, ok := s.Families[ProcessStartMetric]; ok && f.Kind == KindGauge {
		out.ProcessStart, out.HaveStart = f.Max, true
	}
	return out, true
}
