// Package report renders replay results as text, JSON, CSV, Markdown and
// a self-contained HTML page.
// It is the only place where benchseal turns metric values into digits:
// exact values are rounded once, half to even; float values (peer
// definitions) print as the shortest decimal that round-trips.
package report
