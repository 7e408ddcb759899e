package compare

import (
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// A run stating cost.currency with only a price per kWh has a stated
// currency: the cost column's header must not say "currency not stated".
func TestCurrencyStatedWithoutPricePerHour(t *testing.T) {
	in := &Input{Manifest: &schema.Manifest{Cost: &schema.Cost{Currency: "EUR", PricePerKWh: "0.30"}}, Result: &replay.Result{}}
	if got := Currency(in); got != "EUR" {
		t.Errorf("currency %q, want EUR", got)
	}
	if got := Currency(&Input{Manifest: &schema.Manifest{}, Result: &replay.Result{}}); got != "" {
		t.Errorf("no cost: currency %q", got)
	}
}
