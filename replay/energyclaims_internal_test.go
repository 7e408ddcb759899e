package replay

import (
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// Every energy.KEY the catalogue accepts resolves on a point with an
// energy column, to the column's own number (one definition); a point
// without accelerator scrapes resolves each to null with the reason.
func TestEnergyClaimPathsResolveToTheColumn(t *testing.T) {
	g, files := gpuRun()
	p := &PointResult{Point: "p0", window: &[2]int64{2e9, 6e9}, goodTokens: big.NewInt(400), OutputTokens: Int(800), Counts: Counts{Good: 8}}
	p.Energy = energyColumn(files, g, p, big.NewRat(36, 100))
	want := map[string]float64{"energy_j": 800, "energy_j_lo": 800, "energy_j_hi": 800, "mean_power_w": 200,
		"j_per_output_token": 1, "j_per_good_token": 2, "j_per_good_request": 100, "energy_cost": p.Energy.Cost.Value}
	for _, k := range EnergyKeys {
		path := "energy." + k
		if err := schema.CheckClaimMetric("benchseal", path); err != nil {
			t.Errorf("catalogue rejects %s: %v", path, err)
		}
		v, ok := p.Lookup(path)
		f, _ := v.Float64()
		if w, known := want[k]; !ok || !known || f != w {
			t.Errorf("%s = %v (%v), want %v", path, v, ok, want[k])
		}
	}
	if _, ok := p.Lookup("energy.nope"); ok || schema.CheckClaimMetric("benchseal", "energy.nope") == nil {
		t.Error("energy.nope resolves or is accepted")
	}
	bare := &PointResult{Point: "p0"}
	v, ok := bare.Lookup("energy.j_per_good_token")
	why, _ := bare.NullReason("energy.j_per_good_token")
	if !ok || !v.IsNull() || !strings.Contains(why, "no accelerator scrapes") {
		t.Errorf("no scrapes: %v %v %q", v, ok, why)
	}
	p.Energy.PerGoodToken.Reason, p.Energy.PerGoodToken.Value = "no good tokens in the window", 0
	if why, _ := p.NullReason("energy.j_per_good_token"); why != "no good tokens in the window" {
		t.Errorf("null reason %q", why)
	}
}
