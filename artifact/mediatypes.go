package artifact

// Media types and artifact types of a benchseal bundle. Layers use
// benchseal's own vendor types so container runtimes never try to unpack
// them.
const (
	// ArtifactTypeRun is the artifactType of the run manifest.
	ArtifactTypeRun = "application/vnd.benchseal.run.v1"
	// MediaTypeManifestLayer is the run's manifest.json, byte for byte.
	MediaTypeManifestLayer = "application/vnd.benchseal.run.manifest.v1+json"
	// MediaTypeClaimsLayer is the run's claims.json, byte for byte.
	MediaTypeClaimsLayer = "application/vnd.benchseal.run.claims.v1+json"
	// MediaTypeWorkloadLayer is the run's workload.jsonl, zstd-compressed.
	MediaTypeWorkloadLayer = "application/vnd.benchseal.run.workload.v1.jsonl+zstd"
	// MediaTypeRecordsLayer is one shard of records (one load point and
	// repeat) as zstd-compressed JSON Lines, in the run's file order.
	MediaTypeRecordsLayer = "application/vnd.benchseal.run.records.v1.jsonl+zstd"
	// MediaTypeAttachmentLayer is one attachment, byte for byte.
	MediaTypeAttachmentLayer = "application/vnd.benchseal.run.attachment.v1"

	// MediaTypeSigstoreBundle is the media type (and referrer artifactType)
	// of a Sigstore bundle v0.3.
	MediaTypeSigstoreBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// PayloadTypeInToto is the DSSE payload type of an in-toto statement.
	PayloadTypeInToto = "application/vnd.in-toto+json"
	// StatementTypeV1 is the _type of an in-toto Statement v1.
	StatementTypeV1 = "https://in-toto.io/Statement/v1"
	// PredicateTypeRun is the predicate type benchseal signs.
	PredicateTypeRun = "https://benchseal.dev/attestation/run/v1"
)

// Annotation keys written by benchseal.
const (
	AnnotationCreated            = "org.opencontainers.image.created"
	AnnotationTitle              = "org.opencontainers.image.title"
	AnnotationRefName            = "org.opencontainers.image.ref.name"
	AnnotationRunID              = "dev.benchseal.run.id"
	AnnotationPoint              = "dev.benchseal.point"
	AnnotationRepeat             = "dev.benchseal.repeat"
	AnnotationRecords            = "dev.benchseal.records"
	AnnotationUncompressedDigest = "dev.benchseal.uncompressed.digest"
	AnnotationUncompressedSize   = "dev.benchseal.uncompressed.size"
	// AnnotationBundleContent and AnnotationBundlePredicateType are the
	// annotations cosign puts on a Sigstore bundle referrer.
	AnnotationBundleContent       = "dev.sigstore.bundle.content"
	AnnotationBundlePredicateType = "dev.sigstore.bundle.predicateType"
)

// Layer titles of the fixed layers.
const (
	TitleManifest = "manifest.json"
	TitleClaims   = "claims.json"
	TitleWorkload = "workload.jsonl.zst"
)
