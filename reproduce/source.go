package reproduce

import (
	"io"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// SourceOf returns what a test is taken from in a verified bundle: its
// manifest, its workload layer (when shipped) and the pre-registered plan
// the verifier found it executed exactly (signed by a trusted publisher,
// no deviation).
func SourceOf(b *artifact.Bundle, vr *verify.Result) Source {
	src := Source{Manifest: b.Manifest()}
	for _, l := range b.Layers() {
		if l.Kind == artifact.KindWorkload {
			l := l
			src.Workload = func() (io.ReadCloser, error) { return b.OpenLayer(l) }
			break
		}
	}
	src.Plan = executedPlan(vr)
	return src
}

// Apply sets in o what the test fixes: the plan, the workload items, the
// request parameters but the model (the reviewer names the model the
// endpoint serves), the pre-registered plan, and in o.Manifest (created
// when nil) the original's SLO and run-manifest digest (reproduces);
// bundleRef is where the original was read from.
func (t *Test) Apply(o *capture.Options, runManifest, bundleRef string) {
	o.Plan = t.Plan
	o.Plan.Points = append([]schema.Point(nil), t.Plan.Points...)
	o.Prompts = t.Prompts
	o.Dataset = ""
	if t.Prompts != nil {
		o.Dataset = t.Dataset
	}
	model := o.Request.Model
	o.Request = t.Request
	o.Request.Model = model
	o.Registered = t.Registered
	if o.Manifest == nil {
		o.Manifest = &schema.Manifest{}
	}
	o.Manifest.SLO = t.SLO
	o.Manifest.Reproduces = &schema.Reproduces{RunManifest: runManifest, BundleRef: bundleRef}
}
