package importer

import (
	"time"

	"github.com/benchseal/benchseal/importer/vllm"
	"github.com/benchseal/benchseal/schema"
)

// UnzonedTime returns the local time without a zone that an imported
// run's source file gives (vLLM's "date") when the run's times are unknown
// because of it, with the tool's name. The time is a wall-clock reading
// carried in time.UTC, not an instant: benchseal never takes it for one,
// and a publisher who dates a bundle by it chooses the zone.
func UnzonedTime(m *schema.Manifest) (t time.Time, tool string, ok bool) {
	if m.Source == nil {
		return time.Time{}, "", false
	}
	switch m.Source.Tool {
	case vllm.Tool:
		t, ok = vllm.UnzonedDate(m)
		return t, "vLLM", ok
	}
	return time.Time{}, "", false
}
