package artifact

import "github.com/benchseal/benchseal/schema"

// Hard limits applied to every bundle read, by Open, the record streams and
// verify alike. They are kept here, in one place, so parse and verify paths
// share them.
const (
	// MaxLayoutFileSize caps oci-layout.
	MaxLayoutFileSize = 4 << 10
	// MaxIndexSize caps index.json.
	MaxIndexSize = 1 << 20
	// MaxOCIManifestSize caps an OCI image manifest blob (the run's and
	// each referrer's), not the run's manifest.json (MaxDocumentSize;
	// schema.MaxManifestFileSize when a run directory is read).
	MaxOCIManifestSize = 4 << 20
	// MaxIndexEntries caps the descriptors in index.json (one run manifest
	// plus its signature referrers).
	MaxIndexEntries = 65
	// MaxLayers caps the layers of a run manifest.
	MaxLayers = 4096
	// MaxDocumentSize caps manifest.json and claims.json.
	MaxDocumentSize = 64 << 20
	// MaxSignatureBundleSize caps one Sigstore bundle blob.
	MaxSignatureBundleSize = 8 << 20
	// MaxBlobSize caps one stored (possibly compressed) blob.
	MaxBlobSize = 64 << 30
	// MaxUncompressedSize caps the decompressed output of one layer.
	MaxUncompressedSize = 256 << 30
	// MaxCompressionRatio caps declared uncompressed size / stored size for
	// layers larger than MinRatioCheckSize (a decompression-bomb guard on
	// top of the exact size check while streaming).
	MaxCompressionRatio = schema.MaxCompressionRatio
	// MinRatioCheckSize is the uncompressed size below which the ratio is
	// not checked.
	MinRatioCheckSize = schema.MinRatioCheckSize
	// ZstdMaxWindow caps the zstd window of every layer read.
	ZstdMaxWindow = schema.ZstdMaxWindow
	// MaxTarPadding caps the zero bytes accepted after a tar's end-of-archive
	// marker: tar programs pad the archive to their record size (GNU tar: 20
	// blocks of 512 bytes).
	MaxTarPadding = 64 << 10
	// MaxTarEntries caps the entries of a tar bundle.
	MaxTarEntries = (1+MaxReproductions)*(MaxLayers+2) + 2*MaxIndexEntries + 8
	// MaxJSONDepth caps nesting in every JSON document parsed here.
	MaxJSONDepth = schema.MaxJSONDepth
	// MaxRecordLineSize caps one JSON Lines record.
	MaxRecordLineSize = schema.MaxRecordLineSize
)

// Limits of the reproduction referrers of a bundle (reproduction.go).
const (
	// MaxReproductions caps the reproduction referrers of one bundle.
	MaxReproductions = 4
	// MaxAttachedReproductionSize caps the stored bytes of a reproduction
	// AttachReproduction copies into a bundle: it holds them in memory.
	MaxAttachedReproductionSize = 1 << 30
)
