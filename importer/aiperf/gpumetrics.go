package aiperf

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// gpuEvidence converts the telemetry export into the evidence a capture's
// accelerator scrapes are (manifest.gpu_metrics and the scrape files under
// attachments/gpu-metrics/): per source (dcgm_url) one exposition a
// collection instant, holding every device AIPerf read at that instant,
// under the exporter's own metric names (DCGM's, or AMD's
// device-metrics-exporter's) in the exporter's units. Nothing is added:
// a field the line did not carry is not in the scrape; only units change,
// exactly (MJ to mJ or µJ; AIPerf's GB to MiB or MB). AIPerf states one
// time per line (time_ns when it collected), so a scrape's from_ns and
// at_ns are that instant, in the run's clock (minus epoch). Scrapes before
// the first request are "before", after the last end "after", the rest
// "during" the single point.
func gpuEvidence(t *Telemetry, epoch, firstNS, lastNS int64, point string) (*schema.GPUMetrics, []ingest.File, error) {
	gm := &schema.GPUMetrics{}
	var files []ingest.File
	type instant struct {
		src int
		ts  int64
	}
	var order []instant
	at := map[instant][]*TelemetryDevice{}
	srcIdx := map[string]int{}
	for i := range t.Devices {
		d := &t.Devices[i]
		si, ok := srcIdx[d.Source]
		if !ok {
			si = len(gm.Endpoints)
			srcIdx[d.Source] = si
			gm.Endpoints = append(gm.Endpoints, schema.GPUEndpoint{URL: d.Source})
		}
		gm.Endpoints[si].Devices = append(gm.Endpoints[si].Devices, schema.GPUDevice{ID: d.UUID, IDFrom: "UUID", Model: d.Model, Host: d.Hostname, Serving: schema.ServingImported})
		for _, s := range d.Samples {
			k := instant{si, s.TimestampNS}
			if _, ok := at[k]; !ok {
				order = append(order, k)
			}
			at[k] = append(at[k], d)
		}
	}
	slices.SortStableFunc(order, func(a, b instant) int {
		if a.ts != b.ts {
			return cmpInt64(a.ts, b.ts)
		}
		return a.src - b.src
	})
	for n, k := range order {
		text, err := exposition(t.File, at[k], k.ts)
		if err != nil {
			return nil, nil, err
		}
		name := fmt.Sprintf("%s/%06d.prom", schema.GPUMetricsDir, n+1)
		sum := sha256.Sum256(text)
		rel := k.ts - epoch
		when := schema.ScrapeDuring
		switch {
		case rel <= firstNS:
			when = schema.ScrapeBefore
		case rel >= lastNS:
			when = schema.ScrapeAfter
		}
		gm.Scrapes = append(gm.Scrapes, schema.GPUScrape{Endpoint: k.src, Point: point, When: when, AtNS: rel, FromNS: rel, File: name, SHA256: hex.EncodeToString(sum[:])})
		files = append(files, ingest.File{Name: name, Data: text})
	}
	return gm, files, nil
}

// exportedMetric is one metric of a converted scrape: its exposition
// name and type, the telemetry field it comes from (an index of
// TelemetrySample.raw) and the factor from AIPerf's unit to the
// exporter's.
type exportedMetric struct {
	name, typ string
	field     int
	factor    *big.Rat
}

// exportedMetrics are the metrics a converted scrape carries, per vendor:
// the exporter names package energy reads (energy.Names) in the units
// those exporters state (mJ and MiB for DCGM, µJ and MB for AMD).
var exportedMetrics = map[string][]exportedMetric{
	"nvidia": {
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", rawEnergy, big.NewRat(1_000_000_000, 1)}, // MJ → mJ
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", rawPower, big.NewRat(1, 1)},
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", rawUtil, big.NewRat(1, 1)},
		// AIPerf's GB is MiB × 1.048576e-3 (SCALING_FACTORS): 10^9 bytes.
		{"DCGM_FI_DEV_FB_USED", "gauge", rawMemory, big.NewRat(1_000_000_000, 1<<20)},
	},
	"amd": {
		{"gpu_energy_consumed", "counter", rawEnergy, big.NewRat(1_000_000_000_000, 1)}, // MJ → µJ
		{"gpu_power_usage", "gauge", rawPower, big.NewRat(1, 1)},
		{"gpu_gfx_activity", "gauge", rawUtil, big.NewRat(1, 1)},
		{"gpu_used_vram", "gauge", rawMemory, big.NewRat(1000, 1)}, // GB → MB
	},
}

// exposition writes the devices' readings at instant ts as Prometheus
// text: one TYPE line per metric any device carries, one series per
// device that carries it.
func exposition(file string, devs []*TelemetryDevice, ts int64) ([]byte, error) {
	var b strings.Builder
	vendor := ""
	for _, d := range devs {
		if d.Vendor != "" {
			vendor = d.Vendor
		}
	}
	if vendor == "" {
		vendor = "nvidia"
	}
	for _, em := range exportedMetrics[vendor] {
		typed := false
		for _, d := range devs {
			s := sampleAt(d, ts)
			n := s.raw[em.field]
			if n == "" {
				continue
			}
			r, err := ingest.Rat(n)
			if err != nil {
				return nil, ingest.RecordErrorf(file, s.Line, s.Line-1, "telemetry_data", "%w", err)
			}
			if !typed {
				fmt.Fprintf(&b, "# TYPE %s %s\n", em.name, em.typ)
				typed = true
			}
			fmt.Fprintf(&b, "%s{%s} %s\n", em.name, labels(d, vendor), decimal(r.Mul(r, em.factor)))
		}
	}
	return []byte(b.String()), nil
}

// sampleAt is d's sample at ts (ParseTelemetry allows one per instant).
func sampleAt(d *TelemetryDevice, ts int64) *TelemetrySample {
	i, _ := slices.BinarySearchFunc(d.Samples, ts, func(s TelemetrySample, ts int64) int { return cmpInt64(s.TimestampNS, ts) })
	return &d.Samples[i]
}

// labels are a device's labels as its exporter writes them: DCGM's gpu,
// UUID, modelName and Hostname; AMD's gpu_id, serial_number, card_model
// and hostname.
func labels(d *TelemetryDevice, vendor string) string {
	names := [4]string{"gpu", "UUID", "modelName", "Hostname"}
	if vendor == "amd" {
		names = [4]string{"gpu_id", "serial_number", "card_model", "hostname"}
	}
	vals := [4]string{strconv.Itoa(d.Index), d.UUID, d.Model, d.Hostname}
	var parts []string
	for i, n := range names {
		if vals[i] == "" {
			continue
		}
		parts = append(parts, n+`="`+escapeLabel(vals[i])+`"`)
	}
	return strings.Join(parts, ",")
}

// escapeLabel escapes a label value as the text exposition format does:
// backslash, double quote and line feed.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// decimal writes r exactly when it has at most 12 decimals, else rounded
// to 12 (a picojoule of a millijoule counter), without trailing zeros.
func decimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := strings.TrimRight(digits.RatAway(r, 12), "0")
	return strings.TrimSuffix(s, ".")
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
