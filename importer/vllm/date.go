package vllm

import (
	"time"

	"github.com/benchseal/benchseal/schema"
)

// The manifest notes the importer keeps vLLM's "date" in (as written) and,
// when that date carries no zone, states the zone unknown in.
const (
	NoteDate     = "vllm.date"
	NoteDateZone = "vllm.date_zone"
)

// dateLayout is vLLM's datetime.now().strftime("%Y%m%d-%H%M%S").
const dateLayout = "20060102-150405"

// UnzonedDate returns the wall-clock reading of vLLM's "date" when the
// import declared the run's times unknown because that date carries no
// zone (NoteDateZone is set). The result is in time.UTC only to carry the
// reading: it names no instant, and a caller must not present it as one.
func UnzonedDate(m *schema.Manifest) (time.Time, bool) {
	if m.Notes[NoteDateZone] == "" {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(dateLayout, m.Notes[NoteDate], time.UTC)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}
