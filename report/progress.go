package report

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/replay"
)

// mib is bytes to MiB.
var mib = big.NewRat(1, 1<<20)

// WorkProgressText is one progress update of a long step as the CLI's
// progress line shows it, e.g.
// "pack: compress records: 45.2 of 120.3 MiB (37%)".
func WorkProgressText(u progress.Update) string {
	if u.Unit == "bytes" {
		if u.Total > 0 {
			return fmt.Sprintf("%s: %s of %s MiB (%d%%)", u.Phase, Decimal(replay.Int(u.Done), mib, 1), Decimal(replay.Int(u.Total), mib, 1), u.Done*100/u.Total)
		}
		return fmt.Sprintf("%s: %s MiB", u.Phase, Decimal(replay.Int(u.Done), mib, 1))
	}
	if u.Total > 0 {
		return fmt.Sprintf("%s: %d of %d %s (%d%%)", u.Phase, u.Done, u.Total, u.Unit, u.Done*100/u.Total)
	}
	return fmt.Sprintf("%s: %d %s", u.Phase, u.Done, u.Unit)
}
