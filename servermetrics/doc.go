// Package servermetrics reads an inference engine's own Prometheus
// metrics (vLLM, SGLang, TGI) and turns the difference between two
// scrapes into the server-side column of a load point: observation
// counts, means (Δsum ÷ Δcount), the share of observations under each
// bucket edge, and bucket-interpolated percentile estimates that carry
// their bucket bounds. It never yields an exact percentile: a histogram
// cannot give one. A counter that went down between the scrapes (the
// engine restarted) or a metric missing from either scrape makes the
// quantity absent with the reason.
package servermetrics
