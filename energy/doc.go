// Package energy reads an accelerator exporter's Prometheus metrics (the
// NVIDIA DCGM exporter, AMD's device-metrics-exporter, or a counter and
// gauge the user names) per device, and turns the scrapes around a point
// × repeat into the energy its window used: the counter's delta between
// the scrapes that bracket the window, with the lower and upper bound the
// scrape times allow and a stated interpolation for the central value.
// A missing counter, a counter that went down, a device that appeared or
// vanished, or too few scrapes make the energy absent with the reason; a
// power gauge integrated over the scrapes stands in for a missing counter
// only as an estimate, labelled so. The boundary is the accelerator board
// (what the exporter's counter measures), never the wall.
package energy
