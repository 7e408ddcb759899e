// Package report renders what the library packages compute: replay
// results as text, JSON, CSV, Markdown and a self-contained HTML page;
// compare's comparisons and decisions; verify's text report
// (WriteVerifyText); capture's progress lines and end-of-run summary
// (ProgressText, ProgressLine, CaptureText); merge's summary (MergeText);
// reproduction verdicts; and the progress line of long work
// (WorkProgressText).
// It is the only place where benchseal turns metric values and other
// numbers into digits (number.go): exact values are rounded once, half to
// even; float values (peer definitions, capture's own rates) print as the
// shortest decimal that round-trips or to a fixed number of places.
// It sits above every package it renders and below the commands only:
// internal/archtest fails when a package outside cmd/ depends on it, or
// when the commands format a float themselves.
package report
