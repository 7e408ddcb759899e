package artifact

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Layer kinds.
const (
	KindManifest   = "manifest"
	KindClaims     = "claims"
	KindWorkload   = "workload"
	KindRecords    = "records"
	KindAttachment = "attachment"
)

// Layer is one layer of a run manifest with what benchseal recorded about
// it. For layers stored uncompressed, UncompressedDigest and
// UncompressedSize equal the descriptor's digest and size.
type Layer struct {
	Descriptor ocispec.Descriptor
	Kind       string
	Title      string
	// Point, Repeat and Records describe a records shard.
	Point   string
	Repeat  int
	Records int64
	// Compressed is set for zstd layers.
	Compressed         bool
	UncompressedDigest digest.Digest
	UncompressedSize   int64
}

func kindOf(mediaType string) (kind string, compressed bool, ok bool) {
	switch mediaType {
	case MediaTypeManifestLayer:
		return KindManifest, false, true
	case MediaTypeClaimsLayer:
		return KindClaims, false, true
	case MediaTypeWorkloadLayer:
		return KindWorkload, true, true
	case MediaTypeRecordsLayer:
		return KindRecords, true, true
	case MediaTypeAttachmentLayer:
		return KindAttachment, false, true
	}
	return "", false, false
}

// recordsTitle is the title of the shard of one point and repeat.
func recordsTitle(point string, repeat int) string {
	return fmt.Sprintf("records/%s/%d.jsonl.zst", point, repeat)
}

// layerAnnotations returns the annotations recorded on a layer descriptor.
func (l *Layer) annotations() map[string]string {
	a := map[string]string{AnnotationTitle: l.Title}
	if l.Compressed {
		a[AnnotationUncompressedDigest] = string(l.UncompressedDigest)
		a[AnnotationUncompressedSize] = strconv.FormatInt(l.UncompressedSize, 10)
	}
	if l.Kind == KindRecords {
		a[AnnotationPoint] = l.Point
		a[AnnotationRepeat] = strconv.Itoa(l.Repeat)
		a[AnnotationRecords] = strconv.FormatInt(l.Records, 10)
	}
	return a
}

func parseCount(s string, max int64) (int64, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || strings.TrimLeft(s, "0123456789") != "" || len(s) > 19 {
		return 0, fmt.Errorf("%q is not a canonical non-negative integer", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > max {
		return 0, fmt.Errorf("%q out of range", s)
	}
	return n, nil
}

// layerFromDescriptor checks a run-manifest layer descriptor and reads
// benchseal's annotations. Unknown media types are refused: every layer of
// a run is critical.
func layerFromDescriptor(d ocispec.Descriptor) (Layer, error) {
	l := Layer{Descriptor: d}
	if err := checkDescriptor(d, MaxBlobSize); err != nil {
		return l, err
	}
	kind, compressed, ok := kindOf(d.MediaType)
	if !ok {
		return l, fmt.Errorf("unknown layer media type %q", d.MediaType)
	}
	l.Kind, l.Compressed = kind, compressed
	want := map[string]bool{AnnotationTitle: true}
	if compressed {
		want[AnnotationUncompressedDigest] = true
		want[AnnotationUncompressedSize] = true
	}
	if kind == KindRecords {
		want[AnnotationPoint] = true
		want[AnnotationRepeat] = true
		want[AnnotationRecords] = true
	}
	for k := range d.Annotations {
		if !want[k] {
			return l, fmt.Errorf("unexpected annotation %q", k)
		}
	}
	for k := range want {
		if _, ok := d.Annotations[k]; !ok {
			return l, fmt.Errorf("missing annotation %q", k)
		}
	}
	l.Title = d.Annotations[AnnotationTitle]
	if compressed {
		if _, err := ParseDigest(d.Annotations[AnnotationUncompressedDigest]); err != nil {
			return l, fmt.Errorf("annotation %s: %w", AnnotationUncompressedDigest, err)
		}
		l.UncompressedDigest = digest.Digest(d.Annotations[AnnotationUncompressedDigest])
		n, err := parseCount(d.Annotations[AnnotationUncompressedSize], MaxUncompressedSize)
		if err != nil {
			return l, fmt.Errorf("annotation %s: %w", AnnotationUncompressedSize, err)
		}
		l.UncompressedSize = n
		if n > MinRatioCheckSize && n/MaxCompressionRatio > d.Size {
			return l, fmt.Errorf("declared uncompressed size %d is over %d times the stored size %d", n, MaxCompressionRatio, d.Size)
		}
	} else {
		l.UncompressedDigest, l.UncompressedSize = d.Digest, d.Size
	}
	switch kind {
	case KindManifest:
		if l.Title != TitleManifest {
			return l, fmt.Errorf("manifest layer titled %q, want %q", l.Title, TitleManifest)
		}
	case KindClaims:
		if l.Title != TitleClaims {
			return l, fmt.Errorf("claims layer titled %q, want %q", l.Title, TitleClaims)
		}
	case KindWorkload:
		if l.Title != TitleWorkload {
			return l, fmt.Errorf("workload layer titled %q, want %q", l.Title, TitleWorkload)
		}
	case KindRecords:
		l.Point = d.Annotations[AnnotationPoint]
		r, err := parseCount(d.Annotations[AnnotationRepeat], 1<<30)
		if err != nil {
			return l, fmt.Errorf("annotation %s: %w", AnnotationRepeat, err)
		}
		l.Repeat = int(r)
		if l.Records, err = parseCount(d.Annotations[AnnotationRecords], 1<<50); err != nil {
			return l, fmt.Errorf("annotation %s: %w", AnnotationRecords, err)
		}
		if l.Title != recordsTitle(l.Point, l.Repeat) {
			return l, fmt.Errorf("records layer titled %q, want %q", l.Title, recordsTitle(l.Point, l.Repeat))
		}
	case KindAttachment:
		name, ok := strings.CutPrefix(l.Title, "attachments/")
		if !ok || name == "" || !validRelPath(name) {
			return l, fmt.Errorf("attachment title %q is not attachments/<relative path>", l.Title)
		}
	}
	return l, nil
}

func validRelPath(p string) bool {
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.ContainsRune(p, 0) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// checkDescriptor checks the digest grammar (sha256 only), the size and the
// fields benchseal never uses.
func checkDescriptor(d ocispec.Descriptor, maxSize int64) error {
	if d.MediaType == "" {
		return fmt.Errorf("descriptor without mediaType")
	}
	if _, err := ParseDigest(string(d.Digest)); err != nil {
		return err
	}
	if d.Size < 0 || d.Size > maxSize {
		return fmt.Errorf("descriptor %s: size %d out of range (limit %d)", d.Digest, d.Size, maxSize)
	}
	if len(d.URLs) > 0 || d.Platform != nil || len(d.Data) > 0 {
		return fmt.Errorf("descriptor %s: urls, platform and data are not accepted", d.Digest)
	}
	return nil
}
