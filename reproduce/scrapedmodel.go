package reproduce

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// modelLabel is the label vLLM and SGLang put on every series of their
// /metrics naming the model served (vLLM: the served model name, the one
// requests name; docs.vllm.ai "Production Metrics").
const modelLabel = "model_name"

// checkScrapedModel refuses a reproduction whose own server scrapes
// contradict the model its manifest states: some series carry a
// model_name label and none names manifest.model.name. The model is what
// makes a run one of the original's (setupWithheld withholds another
// model's), so a manifest whose model was edited to the original's while
// the engine it scraped served another is no reproduction of it. Every
// stored scrape is read once (each at most servermetrics.MaxScrapeBytes);
// a run without scrapes, or whose scrapes carry no model_name label (TGI,
// llama.cpp), is not judged here.
func checkScrapedModel(om *schema.Manifest, repro *schema.RunDir) error {
	rm := repro.Manifest()
	if rm.ServerMetrics == nil {
		return nil
	}
	seen := map[string]string{} // model_name value → first scrape naming it
	for _, s := range rm.ServerMetrics.Scrapes {
		if s.File == "" {
			continue
		}
		b, err := repro.ReadAttachment(s.File)
		if err != nil {
			return fmt.Errorf("server scrape %s: %w", s.File, err)
		}
		fams, err := servermetrics.ParseFamilies(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("server scrape %s: %w", s.File, err)
		}
		for _, mf := range fams {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() != modelLabel {
						continue
					}
					if l.GetValue() == rm.Model.Name {
						return nil
					}
					if _, ok := seen[l.GetValue()]; !ok {
						seen[l.GetValue()] = s.File
					}
				}
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	names := make([]string, 0, len(seen))
	for v := range seen {
		names = append(names, v)
	}
	slices.Sort(names)
	quoted := make([]string, len(names))
	for i, v := range names {
		quoted[i] = strconv.Quote(v) + " (attachments/" + seen[v] + ")"
	}
	return fmt.Errorf("its server scrapes serve %s=%s, never its manifest's model.name %q (the original's %q): the engine it measured served another model, so it is no run of the original's model", modelLabel, strings.Join(quoted, ", "), rm.Model.Name, om.Model.Name)
}
