package report

import (
	"fmt"
	"io"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// WriteRun renders r in format f as Write does, after the run's evidence
// class and what of it is the signer's word (schema.SignerStatement) in
// text and Markdown; JSON and CSV are data and carry neither (the
// manifest holds the evidence class). replay checks no signature, so
// nothing vouches beyond the signer.
func WriteRun(out io.Writer, f Format, r *replay.Result, m *schema.Manifest) error {
	st := schema.SignerStatement(m.Evidence, schema.Vouch{})
	var err error
	switch f {
	case FormatText, FormatBrief, "":
		_, err = fmt.Fprintf(out, "evidence: %s\n%s\n", schema.EscapeText(m.Evidence, false), st)
	case FormatMarkdown:
		_, err = fmt.Fprintf(out, "**evidence:** %s  \n**%s**\n\n", mdEscape(m.Evidence), mdEscape(st))
	}
	if err != nil {
		return err
	}
	return Write(out, f, r)
}
