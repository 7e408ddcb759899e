package artifact

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/benchseal/benchseal/schema"
	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// PackOptions are the settings of Pack.
type PackOptions struct {
	// Created is the org.opencontainers.image.created time. When zero, the
	// run's finish_time is used; the wall clock never is. Callers pass
	// SOURCE_DATE_EPOCH here.
	Created time.Time
	// MaxProblems caps the validation problems reported (0: 50).
	MaxProblems int
	// Signer, when set, signs the bundle (as Sign does) before it is
	// published: only the finished, signed bundle ever appears at out.
	Signer *Signer
}

// PackResult describes a packed bundle.
type PackResult struct {
	Path           string
	ManifestDigest digest.Digest
	ManifestSize   int64
	Layers         []Layer
	Created        string
	// Signature is the signature added when PackOptions.Signer was set.
	Signature *SignResult
	// Reclaimed lists staging leftovers of killed runs for the same out
	// that were removed.
	Reclaimed []schema.Reclaimed
}

// Pack validates the run directory runDir and writes it as a bundle at out:
// an OCI image layout directory, or a deterministic tar when out ends in
// ".tar". The write is atomic: on failure (or if killed) nothing is left at
// out, and an existing out is never touched (Pack refuses to overwrite).
// The bundle is built in a staging entry beside out (schema.NewStagingDir);
// those left by killed runs are removed first and listed in the result.
// The same run gives byte-identical blobs and the same manifest digest on
// any machine, at any time, with any GOMAXPROCS and file mtimes.
func Pack(ctx context.Context, runDir, out string, opts PackOptions) (*PackResult, error) {
	if _, err := os.Lstat(out); err == nil {
		return nil, fmt.Errorf("pack %s: already exists (refusing to overwrite)", out)
	}
	reclaimed, err := schema.ReclaimStale(out)
	if err != nil {
		return nil, err
	}
	maxProblems := opts.MaxProblems
	if maxProblems <= 0 {
		maxProblems = 50
	}
	if err := schema.ValidateRunDirContext(ctx, runDir, maxProblems); err != nil {
		return nil, err
	}
	rd, err := schema.OpenRunDir(runDir)
	if err != nil {
		return nil, err
	}
	m := rd.Manifest()
	created := opts.Created
	if created.IsZero() {
		if m.FinishTime == "" {
			return nil, fmt.Errorf("pack %s: the run's finish_time is unknown, so the bundle's creation time cannot come from it: "+
				"state it with SOURCE_DATE_EPOCH (Unix seconds)", runDir)
		}
		created, err = time.Parse(time.RFC3339Nano, m.FinishTime)
		if err != nil {
			return nil, fmt.Errorf("pack %s: run finish_time %q: %w", runDir, m.FinishTime, err)
		}
	}
	created = created.UTC().Truncate(time.Second)
	createdStr := created.Format(time.RFC3339)

	st, err := newStage(out)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", out, err)
	}
	ok := false
	defer func() {
		if !ok {
			st.discard()
		}
	}()
	var layers []Layer
	raw := func(kind, mediaType, title, file string) error {
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		d, n, err := st.putBytes(b)
		if err != nil {
			return err
		}
		layers = append(layers, Layer{
			Descriptor: ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: n},
			Kind:       kind, Title: title, UncompressedDigest: d, UncompressedSize: n,
		})
		return nil
	}
	if err := raw(KindManifest, MediaTypeManifestLayer, TitleManifest, filepath.Join(runDir, schema.ManifestFile)); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	if rd.Claims() != nil {
		if err := raw(KindClaims, MediaTypeClaimsLayer, TitleClaims, filepath.Join(runDir, schema.ClaimsFile)); err != nil {
			return nil, fmt.Errorf("pack: %w", err)
		}
	}
	if rd.WorkloadPath != "" {
		f, err := os.Open(rd.WorkloadPath)
		if err != nil {
			return nil, fmt.Errorf("pack: %w", err)
		}
		l, err := st.putZstd(ctx, f, KindWorkload, MediaTypeWorkloadLayer, TitleWorkload)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("pack workload: %w", err)
		}
		layers = append(layers, l)
	}
	shards, err := st.shardRecords(ctx, rd)
	if err != nil {
		return nil, fmt.Errorf("pack records: %w", err)
	}
	layers = append(layers, shards...)
	for _, a := range rd.Attachments {
		if !validRelPath(a) {
			return nil, fmt.Errorf("pack: attachment %q: bad name", a)
		}
		if err := raw(KindAttachment, MediaTypeAttachmentLayer, "attachments/"+a,
			filepath.Join(runDir, schema.AttachmentsDir, filepath.FromSlash(a))); err != nil {
			return nil, fmt.Errorf("pack: %w", err)
		}
	}
	if len(layers) > MaxLayers {
		return nil, fmt.Errorf("pack: %d layers, over the limit %d", len(layers), MaxLayers)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, _, err := st.putBytes([]byte("{}")); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	man := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeRun,
		Config:       emptyDescriptor(),
		Annotations: map[string]string{
			AnnotationCreated: createdStr,
			AnnotationRunID:   m.RunID,
		},
	}
	for i := range layers {
		layers[i].Descriptor.Annotations = layers[i].annotations()
		man.Layers = append(man.Layers, layers[i].Descriptor)
	}
	mb, err := marshalDoc(man)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	md, msize, err := st.putBytes(mb)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	runDesc := ocispec.Descriptor{
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeRun,
		Digest:       md,
		Size:         msize,
		Annotations:  map[string]string{AnnotationRefName: m.RunID},
	}
	ib, err := marshalIndex(runDesc, nil)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	if err := st.finishLayout(ib); err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	res := &PackResult{Path: out, ManifestDigest: md, ManifestSize: msize, Layers: layers, Created: createdStr, Reclaimed: reclaimed}
	if opts.Signer != nil {
		if res.Signature, err = st.sign(ctx, opts.Signer); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := fault("pack-publish"); err != nil {
		return nil, err
	}
	ok = true
	if err := st.publish(out, created); err != nil {
		return nil, fmt.Errorf("pack %s: %w", out, err)
	}
	if res.Signature != nil {
		if err := writeDetached(out, res.Signature); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// sign checks the staged layout as a bundle (every digest, as Sign does)
// and adds a signature to it in place: it is not published yet.
func (s *stage) sign(ctx context.Context, signer *Signer) (*SignResult, error) {
	b, err := Open(s.dir)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.CheckContent(ctx); err != nil {
		return nil, err
	}
	add, ib, res, err := b.newSignature(ctx, signer)
	if err != nil {
		return nil, err
	}
	add[ocispec.ImageIndexFile] = ib
	if err := s.writeLayoutFiles(add); err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return res, nil
}

func emptyDescriptor() ocispec.Descriptor {
	return ocispec.Descriptor{
		MediaType: ocispec.MediaTypeEmptyJSON,
		Digest:    ocispec.DescriptorEmptyJSON.Digest,
		Size:      ocispec.DescriptorEmptyJSON.Size,
	}
}

// marshalIndex encodes index.json: the run manifest first, then the
// signature referrers in the given order.
func marshalIndex(run ocispec.Descriptor, referrers []ocispec.Descriptor) ([]byte, error) {
	idx := ocispec.Index{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageIndex,
		Manifests: append([]ocispec.Descriptor{run}, referrers...),
	}
	return json.Marshal(idx)
}

// putZstd compresses r into a blob with the pinned encoder, recording the
// digest and size of the uncompressed stream too.
func (s *stage) putZstd(ctx context.Context, r io.Reader, kind, mediaType, title string) (Layer, error) {
	bw, err := s.newBlob()
	if err != nil {
		return Layer{}, err
	}
	zw, err := schema.NewZstdWriter(bw)
	if err != nil {
		bw.abort()
		return Layer{}, err
	}
	uh := sha256.New()
	un, err := io.Copy(io.MultiWriter(zw, uh), schema.ContextReader(ctx, r))
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		bw.abort()
		return Layer{}, err
	}
	d, n, err := bw.commit()
	if err != nil {
		return Layer{}, err
	}
	return Layer{
		Descriptor: ocispec.Descriptor{MediaType: mediaType, Digest: d, Size: n},
		Kind:       kind, Title: title, Compressed: true,
		UncompressedDigest: digest.NewDigestFromBytes(digest.SHA256, uh.Sum(nil)),
		UncompressedSize:   un,
	}, nil
}

type shardKey struct {
	point  string
	repeat int
}

// shardRecords splits the records file by load point and repeat, keeping
// each line's bytes and the file order, into plain temporary files, then
// compresses each shard into a layer. Shards follow the manifest's point
// order, then repeat order.
func (s *stage) shardRecords(ctx context.Context, rd *schema.RunDir) ([]Layer, error) {
	m := rd.Manifest()
	f, err := os.Open(rd.RecordsPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(rd.RecordsPath) == ".zst" {
		zr, err := schema.NewZstdReader(f)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	}
	tmpDir := filepath.Join(s.dir, ".shards")
	if err := os.Mkdir(tmpDir, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmpDir)
	type shard struct {
		f     *os.File
		w     *bufio.Writer
		count int64
	}
	shards := map[shardKey]*shard{}
	defer func() {
		for _, sh := range shards {
			sh.f.Close()
		}
	}()
	order := map[string]int{}
	for i, p := range m.Load.Points {
		order[p.Name] = i
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxRecordLineSize)
	line := 0
	for sc.Scan() {
		line++
		if line%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rec, err := schema.DecodeRecord(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", rd.RecordsPath, line, err)
		}
		if _, ok := order[rec.Point]; !ok {
			return nil, fmt.Errorf("%s:%d: point %q is not declared in the manifest", rd.RecordsPath, line, rec.Point)
		}
		if rec.Repeat < 0 {
			return nil, fmt.Errorf("%s:%d: negative repeat", rd.RecordsPath, line)
		}
		k := shardKey{rec.Point, rec.Repeat}
		sh := shards[k]
		if sh == nil {
			tf, err := os.CreateTemp(tmpDir, "shard-")
			if err != nil {
				return nil, err
			}
			sh = &shard{f: tf, w: bufio.NewWriterSize(tf, 32<<10)}
			shards[k] = sh
		}
		sh.w.Write(sc.Bytes())
		if err := sh.w.WriteByte('\n'); err != nil {
			return nil, err
		}
		sh.count++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", rd.RecordsPath, line+1, err)
	}
	keys := make([]shardKey, 0, len(shards))
	for k := range shards {
		keys = append(keys, k)
	}
	sortShardKeys(keys, order)
	var layers []Layer
	for _, k := range keys {
		sh := shards[k]
		if err := sh.w.Flush(); err != nil {
			return nil, err
		}
		if _, err := sh.f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		l, err := s.putZstd(ctx, bufio.NewReaderSize(sh.f, 256<<10), KindRecords, MediaTypeRecordsLayer, recordsTitle(k.point, k.repeat))
		if err != nil {
			return nil, err
		}
		l.Point, l.Repeat, l.Records = k.point, k.repeat, sh.count
		layers = append(layers, l)
		sh.f.Close()
		os.Remove(sh.f.Name())
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return layers, nil
}

func sortShardKeys(keys []shardKey, order map[string]int) {
	less := func(a, b shardKey) bool {
		if order[a.point] != order[b.point] {
			return order[a.point] < order[b.point]
		}
		return a.repeat < b.repeat
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && less(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}
