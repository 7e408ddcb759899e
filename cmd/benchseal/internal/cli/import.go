package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/importer"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

type importOptions struct {
	out      string
	manifest string
	set      []string
	compress bool
}

func newImportCmd(io *IO) *cobra.Command {
	o := &importOptions{}
	var tools strings.Builder
	for _, t := range importer.Tools() {
		im, _ := importer.Lookup(t)
		fmt.Fprintf(&tools, "  %-15s %s\n", t, im.Files)
	}
	cmd := &cobra.Command{
		Use:   "import TOOL FILE... --out RUNDIR [--manifest OVERLAY.json] [--set key=value ...]",
		Short: "Turn another benchmark tool's output files into a benchseal run directory",
		Long: `import reads the output files of another LLM-inference benchmark tool and
writes a benchseal run directory: records rebuilt from what the tool stored
(manifest.source.derived says how), a manifest with everything the files
state and every must-state field they do not state listed in "unknown", the
tool's own summary as claims.json under that tool's definitions, and the
original files byte for byte under attachments/. Nothing is written at
--out unless the whole import succeeds.

Complete what the files do not say with --manifest (a partial manifest
merged over the generated one, JSON merge patch) and --set (dotted path,
e.g. --set hardware.accelerator=H100 --set hardware.accelerator_count=8);
a field set this way is no longer listed as unknown.

Tools and the files they take:
` + tools.String(),
		Args: minimumArgs(2, "a tool name and a file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd, io, o, args[0], args[1:])
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "run directory to create (required; must not exist or be empty)")
	cmd.Flags().StringVar(&o.manifest, "manifest", "", "partial manifest (JSON) merged over the generated one")
	cmd.Flags().StringArrayVar(&o.set, "set", nil, "set a manifest field: dotted.path=value (repeatable)")
	cmd.Flags().BoolVar(&o.compress, "compress", false, "write records.jsonl.zst instead of records.jsonl")
	cmd.MarkFlagRequired("out")
	return cmd
}

func runImport(cmd *cobra.Command, io *IO, o *importOptions, tool string, paths []string) error {
	if _, ok := importer.Lookup(tool); !ok {
		return usagef("import: unknown tool %q (known: %s)", tool, strings.Join(importer.Tools(), ", "))
	}
	if err := refuseInputAsOut("--out", o.out, append([]string{o.manifest}, paths...)); err != nil {
		return err
	}
	opts := importer.Options{Set: o.set, Compress: o.compress, Importer: currentBuild(io)}
	if o.manifest != "" {
		b, err := os.ReadFile(o.manifest)
		if err != nil {
			return fmt.Errorf("--manifest: %w", err) // a file it cannot read: exit 1, not usage
		}
		opts.Overlay = b
	}
	// A malformed --set or --manifest is a usage error before anything is
	// read, as in capture: the same merge on a scratch manifest.
	if err := schema.ApplyOverlay(&schema.Manifest{}, opts.Overlay, opts.Set); err != nil {
		return usagef("%v", err)
	}
	files, err := importer.ReadFiles(paths)
	if err != nil {
		return err
	}
	res, err := importer.Import(cmd.Context(), tool, files, o.out, opts)
	if err != nil {
		// The files are not what they were given as (another tool's, a
		// summary without the per-request file, a run they cannot make
		// valid): exit 3 for every importer.
		// A run that is invalid only with the --set values applied (the
		// hint of the first refusal followed) is the same kind of mistake.
		var ve *schema.ValidationError
		if errors.Is(err, ingest.ErrBadInput) || errors.Is(err, ingest.ErrNoFiles) || errors.As(err, &ve) {
			return rejected(err)
		}
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(io.ErrOut, "warning:", w)
	}
	claims, notRecomputable := 0, 0
	if res.Claims != nil {
		for _, p := range res.Claims.Points {
			for _, c := range p.Metrics {
				claims++
				if c.NotRecomputable != "" {
					notRecomputable++
				}
			}
		}
	}
	fmt.Fprintf(io.Out, "imported %s: %s, %s, %s (%d not recomputable), %s -> %s\n",
		tool, count(res.Written, "record"), count(len(res.Manifest.Load.Points), "load point"), count(claims, "claim"),
		notRecomputable, count(len(res.Manifest.Unknown), "unknown field"), o.out)
	return nil
}

// count says n things in English: "1 load point", "2 load points".
func count[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
