package report

import (
	"fmt"
	"io"

	"github.com/benchseal/benchseal/compare"
)

// WriteCompare renders a comparison in format f (text, json, markdown or
// html).
func WriteCompare(out io.Writer, f Format, r *compare.Result) error {
	switch f {
	case FormatJSON:
		return CompareJSON(out, r)
	case FormatMarkdown:
		return CompareMarkdown(out, r)
	case FormatHTML:
		return CompareHTML(out, r)
	case FormatText, "":
		return CompareText(out, r)
	}
	return fmt.Errorf("report: format %q is not available for compare", f)
}

// WriteDecide renders a decision in format f (text, json, markdown or
// html).
func WriteDecide(out io.Writer, f Format, d *compare.Decision) error {
	switch f {
	case FormatJSON:
		return DecideJSON(out, d)
	case FormatMarkdown:
		return DecideMarkdown(out, d)
	case FormatHTML:
		return DecideHTML(out, d)
	case FormatText, "":
		return DecideText(out, d)
	}
	return fmt.Errorf("report: format %q is not available for decide", f)
}
