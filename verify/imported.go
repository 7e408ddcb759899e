package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchseal/benchseal/artifact"
)

// checkImport re-derives an imported run from its attached source files
// with the configured ImportChecker. A run that is not imported passes; an
// imported run without a checker fails (its records cannot be tied to the
// tool's output).
func (v *Verifier) checkImport(ctx context.Context, b *artifact.Bundle, res *Result) *CheckError {
	m := b.Manifest()
	if !m.Imported() {
		res.pass(CheckImport, "not an imported run")
		return nil
	}
	if v.importer == nil {
		return res.fail(CheckImport, artifact.TitleManifest, errors.New("the run is imported but no import checker is configured, so its records cannot be tied to the attached source files"))
	}
	// Bundle.ReadAttachment refuses an attachment declared over
	// schema.MaxAttachmentSize before reading it.
	attachment := b.ReadAttachment
	var notes []string
	var err error
	if n, ok := v.importer.(ImportNoter); ok {
		notes, err = n.CheckImportNotes(ctx, b, attachment)
	} else {
		err = v.importer.CheckImport(ctx, b, attachment)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return res.fail(CheckImport, artifact.TitleManifest, err)
	}
	msg := fmt.Sprintf("re-importing the %d attached source file(s) with the %s importer gives every record, the provenance, windows, load points and counts this bundle holds", len(m.Source.Files), m.Source.Tool)
	if len(notes) > 0 {
		msg += fmt.Sprintf("; %d value(s) today's importer also derives are absent (made by an older importer, listed as UNVERIFIED)", len(notes))
	}
	res.pass(CheckImport, msg)
	for _, n := range notes {
		res.Warnings = append(res.Warnings, "import-rederive: "+n)
	}
	return nil
}
