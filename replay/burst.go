// The note on chunk gaps of 0 ns in a synthetic run.

package replay

import (
	"fmt"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// burstNote explains the ITLs and TPOTs of 0 ms of a synthetic run: when
// at least a tenth of its chunk gaps are exactly 0 ns (chunks read at one
// instant), the simulator sent tokens in bursts ("" otherwise, and for
// any run not synthetic, whose bursts have other causes).
func burstNote(m *schema.Manifest, groups map[groupKey]*group) string {
	if m.Evidence != schema.EvidenceSynthetic {
		return ""
	}
	var zero, all int64
	for _, g := range groups {
		zero += g.zeroGaps
		all += g.itl.acc.n
	}
	if all == 0 || zero*10 < all {
		return ""
	}
	return fmt.Sprintf("itl and tpot: %d of %d chunk gaps (%s %%) are 0 ns, so ITL and TPOT read 0 ms where they fall: the simulator sends tokens in bursts below ~1 ms/token (its timers wake about once a millisecond); see docs/capture.md",
		zero, all, digits.Places(100*float64(zero)/float64(all), 0))
}
