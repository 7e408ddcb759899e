package artifact

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/internal/progress"
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
	sh, rd, err := validateForPack(ctx, st, runDir, out, maxProblems)
	if sh != nil {
		defer sh.close()
	}
	if err != nil {
		return nil, err
	}
	m := rd.Manifest()
	created, err := packCreated(opts.Created, runDir, m)
	if err != nil {
		return nil, err
	}
	createdStr := created.Format(time.RFC3339)

	layers, err := packLayers(ctx, st, sh, rd, runDir)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	md, msize, err := st.putRunManifest(layers, createdStr, m.RunID)
	if err != nil {
		return nil, fmt.Errorf("pack: %w", err)
	}
	res := &PackResult{Path: out, ManifestDigest: md, ManifestSize: msize, Layers: layers, Created: createdStr, Reclaimed: reclaimed}
	if opts.Signer != nil {
		if res.Signature, err = st.sign(ctx, opts.Signer, md, layers); err != nil {
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
		// A new bundle: a detached file already there is stale.
		if err := writeDetached(DetachedPath(out), res.Signature); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// validateForPack validates runDir (schema.CheckRunDir, then its stored
// scrapes as verify will check them) and opens it. It makes one pass over
// the records: validation hands every record it reads to the sharder it
// returns, which writes the shards into st. A manifest that does not
// decode gets no sharder; validation reports why. The sharder is returned
// whenever one was made, with or without an error: the caller closes it.
func validateForPack(ctx context.Context, st *stage, runDir, out string, maxProblems int) (*sharder, *schema.RunDir, error) {
	var sh *sharder
	var each func([]byte, *schema.Record) error
	if mf, err := os.Open(filepath.Join(runDir, schema.ManifestFile)); err == nil {
		m, derr := schema.DecodeManifest(mf, schema.ManifestFile)
		mf.Close()
		if derr == nil && schema.WithinLoadLimits(&m.Load) {
			if sh, err = st.newSharder(m); err != nil {
				return nil, nil, fmt.Errorf("pack %s: %w", out, err)
			}
			each = countRecords(progress.Phase(ctx, "pack: read, validate and compress records", "records", -1), sh.add)
		}
	}
	sum, err := schema.CheckRunDir(ctx, runDir, maxProblems, each)
	if err != nil {
		return sh, nil, err
	}
	// The stored scrapes, as verify will check them.
	if probs := CheckRunDirServerEvidence(runDir, sum); len(probs) > 0 {
		return sh, nil, &schema.ValidationError{Problems: probs}
	}
	rd, err := schema.OpenRunDir(runDir)
	if err != nil {
		return sh, nil, err
	}
	if sh == nil {
		return nil, nil, fmt.Errorf("pack %s: the manifest validated but could not be read again", runDir)
	}
	if sh.skipped > 0 {
		// Validation rejects such records; should the manifest have
		// changed under us, no record is left out silently.
		return sh, nil, fmt.Errorf("pack %s: %d record(s) outside the plan of %s passed validation (was it changed while packing?)", runDir, sh.skipped, schema.ManifestFile)
	}
	return sh, rd, nil
}

// packCreated is the bundle's creation time: created when set (callers
// pass SOURCE_DATE_EPOCH), else the run's finish_time, never the wall
// clock; in UTC, to the second.
func packCreated(created time.Time, runDir string, m *schema.Manifest) (time.Time, error) {
	if created.IsZero() {
		if m.FinishTime == "" {
			return time.Time{}, errcond.Errorf(ErrNoCreationTime, "pack %s: the run's finish_time is unknown, so the bundle's creation time cannot come from it: state it with SOURCE_DATE_EPOCH (Unix seconds)", runDir)
		}
		var err error
		created, err = time.Parse(time.RFC3339Nano, m.FinishTime)
		if err != nil {
			return time.Time{}, fmt.Errorf("pack %s: run finish_time %q: %w", runDir, m.FinishTime, err)
		}
	}
	return created.UTC().Truncate(time.Second), nil
}

// packLayers writes the layers of the run into st in bundle order: the
// manifest and claims as they are, the workload zstd-compressed, the
// record shards sh holds (compressed, then sh is closed: before the stage
// is published), then every attachment as it is.
func packLayers(ctx context.Context, st *stage, sh *sharder, rd *schema.RunDir, runDir string) ([]Layer, error) {
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
	shards, err := sh.compress(ctx, st)
	sh.close() // before the stage is published
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
	return layers, nil
}

// putRunManifest writes the empty config, the run manifest listing layers
// (their annotations set from each Layer) and the layout's index.json
// naming it runID into s, and returns the run manifest's digest and size.
func (s *stage) putRunManifest(layers []Layer, created, runID string) (digest.Digest, int64, error) {
	if _, _, err := s.putBytes([]byte("{}")); err != nil {
		return "", 0, err
	}
	man := ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeRun,
		Config:       emptyDescriptor(),
		Annotations: map[string]string{
			AnnotationCreated: created,
			AnnotationRunID:   runID,
		},
	}
	for i := range layers {
		layers[i].Descriptor.Annotations = layers[i].annotations()
		man.Layers = append(man.Layers, layers[i].Descriptor)
	}
	mb, err := marshalDoc(man)
	if err != nil {
		return "", 0, err
	}
	md, msize, err := s.putBytes(mb)
	if err != nil {
		return "", 0, err
	}
	runDesc := ocispec.Descriptor{
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactTypeRun,
		Digest:       md,
		Size:         msize,
		Annotations:  map[string]string{AnnotationRefName: runID},
	}
	ib, err := marshalIndex(runDesc, nil)
	if err != nil {
		return "", 0, err
	}
	if err := s.finishLayout(ib); err != nil {
		return "", 0, err
	}
	return md, msize, nil
}

// sign checks the staged layout as the bundle pack wrote and adds a
// signature to it in place: it is not published yet. Pack hashed every
// blob as it wrote it (blobWriter, each file synced before it was named by
// that digest) and every layer's uncompressed bytes as it fed them to the
// encoder, so reading the layers back would re-hash the same bytes (a
// sixth of pack's CPU at 1M requests). What is checked instead is that the
// layout being signed is the one written: it opens as a bundle, its run
// manifest is the one pack stored (digest md), its layers are exactly
// those hashed while writing, and each blob file has its written size.
// verify reads every byte again, so a layer the encoder had mangled could
// never be VERIFIED under this signature.
func (s *stage) sign(ctx context.Context, signer *Signer, md digest.Digest, written []Layer) (*SignResult, error) {
	b, err := Open(s.dir)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := b.checkWritten(md, written); err != nil {
		return nil, err
	}
	if signRead != nil {
		signRead(b.BytesRead())
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

// signRead, when set (by tests), is given the bytes stage.sign read from
// the staged bundle before signing it.
var signRead func(int64)

// checkWritten reports whether b is the layout pack just wrote: run
// manifest md, the layers written (descriptor and uncompressed digest and
// size each), and every layer's blob file of its written size.
func (b *Bundle) checkWritten(md digest.Digest, written []Layer) error {
	if got := b.RunDescriptor().Digest; got != md {
		return invalid(CheckLayout, "index.json", "the staged run manifest is %s, not the %s pack wrote", got, md)
	}
	if len(b.layers) != len(written) {
		return invalid(CheckLayout, string(md), "%d layers staged, %d written", len(b.layers), len(written))
	}
	for i, l := range b.layers {
		w := written[i]
		if l.Descriptor.Digest != w.Descriptor.Digest || l.Descriptor.Size != w.Descriptor.Size ||
			l.UncompressedDigest != w.UncompressedDigest || l.UncompressedSize != w.UncompressedSize {
			return invalid(CheckDescriptors, l.Title, "the staged layer is not the one pack wrote")
		}
		if n, ok := b.src.size(blobPath(l.Descriptor.Digest)); !ok || n != l.Descriptor.Size {
			return invalid(CheckDescriptors, string(l.Descriptor.Digest), "the staged blob of %q is %d bytes, not the %d written", l.Title, n, l.Descriptor.Size)
		}
	}
	return nil
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

// sharder splits the records file by load point and repeat while
// validation streams it, keeping each line's bytes and the file order, so
// the records are read, decompressed and decoded once. A capture writes a
// point × repeat's records together, so each shard is compressed into its
// layer as it streams, one encoder at a time (writing 637 MB of
// uncompressed shards to temporary files at 1M requests cost pack a
// quarter of its CPU in system time). A shard whose records resume after
// another shard's began is spilled: its layer so far is decompressed into
// a plain temporary file that takes the rest, and compress turns it into a
// layer once validation ends; each shard spills at most once. Records
// outside the plan are not written: validation rejects them.
type sharder struct {
	st       *stage
	dir      string
	order    map[string]int
	repeats  int
	cur      *streamShard
	finished map[shardKey]Layer // streamed shards, closed
	spilled  map[shardKey]*shardFile
	skipped  int64 // records outside the plan, not written
}

// streamShard is the shard being compressed as validation streams it.
type streamShard struct {
	key   shardKey
	bw    *blobWriter
	zw    io.WriteCloser
	uh    hash.Hash
	w     *bufio.Writer // into zw and uh
	n     int64         // uncompressed bytes
	count int64
}

type shardFile struct {
	f     *os.File
	w     *bufio.Writer
	count int64
}

// newSharder shards the records of the run whose manifest is m into
// layers of the stage.
func (s *stage) newSharder(m *schema.Manifest) (*sharder, error) {
	dir := filepath.Join(s.dir, ".shards")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	sh := &sharder{st: s, dir: dir, order: map[string]int{}, repeats: max(m.Load.Repeats, 1),
		finished: map[shardKey]Layer{}, spilled: map[shardKey]*shardFile{}}
	for i, p := range m.Load.Points {
		if _, dup := sh.order[p.Name]; !dup {
			sh.order[p.Name] = i
		}
	}
	return sh, nil
}

// add writes one record line to its shard.
func (sh *sharder) add(line []byte, rec *schema.Record) error {
	if _, ok := sh.order[rec.Point]; !ok || rec.Repeat < 0 || rec.Repeat >= sh.repeats {
		sh.skipped++
		return nil
	}
	k := shardKey{rec.Point, rec.Repeat}
	if c := sh.cur; c != nil && c.key == k {
		c.w.Write(line)
		c.n += int64(len(line)) + 1
		c.count++
		return c.w.WriteByte('\n')
	}
	f := sh.spilled[k]
	if f == nil {
		if _, ok := sh.finished[k]; ok {
			var err error
			if f, err = sh.spill(k); err != nil {
				return err
			}
		}
	}
	if f != nil {
		f.w.Write(line)
		f.count++
		return f.w.WriteByte('\n')
	}
	shards := len(sh.finished) + len(sh.spilled)
	if sh.cur != nil {
		shards++
	}
	if shards >= MaxLayers {
		return fmt.Errorf("records of more than %d point × repeat pairs: over the layer limit", MaxLayers)
	}
	if err := sh.finishCur(); err != nil {
		return err
	}
	if err := sh.startCur(k); err != nil {
		return err
	}
	return sh.add(line, rec)
}

// startCur begins streaming shard k into a new blob.
func (sh *sharder) startCur(k shardKey) error {
	bw, err := sh.st.newBlob()
	if err != nil {
		return err
	}
	zw, err := schema.NewZstdWriter(bw)
	if err != nil {
		bw.abort()
		return err
	}
	c := &streamShard{key: k, bw: bw, zw: zw, uh: sha256.New()}
	c.w = bufio.NewWriterSize(io.MultiWriter(zw, c.uh), 256<<10)
	sh.cur = c
	return nil
}

// finishCur closes the streamed shard, if any, into its layer.
func (sh *sharder) finishCur() error {
	c := sh.cur
	if c == nil {
		return nil
	}
	sh.cur = nil
	err := c.w.Flush()
	if cerr := c.zw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.bw.abort()
		return err
	}
	d, n, err := c.bw.commit()
	if err != nil {
		return err
	}
	sh.finished[c.key] = Layer{
		Descriptor: ocispec.Descriptor{MediaType: MediaTypeRecordsLayer, Digest: d, Size: n},
		Kind:       KindRecords, Title: recordsTitle(c.key.point, c.key.repeat), Compressed: true,
		UncompressedDigest: digest.NewDigestFromBytes(digest.SHA256, c.uh.Sum(nil)),
		UncompressedSize:   c.n,
		Point:              c.key.point, Repeat: c.key.repeat, Records: c.count,
	}
	return nil
}

// spill moves finished shard k back to a plain temporary file (its
// records decompressed from its blob, which is removed) that takes the
// records still to come.
func (sh *sharder) spill(k shardKey) (*shardFile, error) {
	l := sh.finished[k]
	delete(sh.finished, k)
	name := filepath.Join(sh.st.dir, filepath.FromSlash(blobPath(l.Descriptor.Digest)))
	src, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	zr, err := schema.NewZstdReader(bufio.NewReaderSize(src, 256<<10))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	tf, err := os.CreateTemp(sh.dir, "shard-")
	if err != nil {
		return nil, err
	}
	f := &shardFile{f: tf, w: bufio.NewWriterSize(tf, 32<<10), count: l.Records}
	sh.spilled[k] = f
	if _, err := io.Copy(f.w, zr); err != nil {
		return nil, fmt.Errorf("records of point %q repeat %d: reading back its layer: %w", k.point, k.repeat, err)
	}
	if !sh.blobShared(l.Descriptor.Digest) {
		os.Remove(name)
	}
	return f, nil
}

// blobShared reports whether another finished layer is stored in blob d.
func (sh *sharder) blobShared(d digest.Digest) bool {
	for _, l := range sh.finished {
		if l.Descriptor.Digest == d {
			return true
		}
	}
	return false
}

// close removes the temporary files. It is idempotent.
func (sh *sharder) close() {
	if c := sh.cur; c != nil {
		sh.cur = nil
		c.zw.Close()
		c.bw.abort()
	}
	for k, f := range sh.spilled {
		f.f.Close()
		delete(sh.spilled, k)
	}
	os.RemoveAll(sh.dir)
}

// compress closes the streamed shard and turns each spilled shard into a
// records layer, and returns every records layer in the manifest's point
// order then repeat order. Spilled shards are compressed one after the
// other: two encoders at once cut the wall time on an idle machine but
// add their buffers (about 13 MB) to the peak memory, and save no CPU time.
func (sh *sharder) compress(ctx context.Context, s *stage) ([]Layer, error) {
	if err := sh.finishCur(); err != nil {
		return nil, err
	}
	keys := make([]shardKey, 0, len(sh.finished)+len(sh.spilled))
	for k := range sh.finished {
		keys = append(keys, k)
	}
	var spilled []shardKey
	var total int64
	for k, f := range sh.spilled {
		keys = append(keys, k)
		spilled = append(spilled, k)
		if err := f.w.Flush(); err != nil {
			return nil, err
		}
		n, err := f.f.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, err
		}
		total += n
	}
	sortShardKeys(keys, sh.order)
	sortShardKeys(spilled, sh.order)
	if len(spilled) > 0 {
		c := progress.Phase(ctx, "pack: compress records", "bytes", total)
		for _, k := range spilled {
			f := sh.spilled[k]
			if _, err := f.f.Seek(0, io.SeekStart); err != nil {
				return nil, err
			}
			l, err := s.putZstd(ctx, bufio.NewReaderSize(progress.Reader(f.f, c), 256<<10), KindRecords, MediaTypeRecordsLayer, recordsTitle(k.point, k.repeat))
			if err != nil {
				return nil, err
			}
			l.Point, l.Repeat, l.Records = k.point, k.repeat, f.count
			sh.finished[k] = l
			f.f.Close()
			os.Remove(f.f.Name())
			delete(sh.spilled, k)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	layers := make([]Layer, 0, len(keys))
	for _, k := range keys {
		layers = append(layers, sh.finished[k])
	}
	return layers, nil
}

// countRecords returns each counting every record it is given on c.
func countRecords(c *progress.Counter, each func([]byte, *schema.Record) error) func([]byte, *schema.Record) error {
	if c == nil {
		return each
	}
	return func(b []byte, r *schema.Record) error {
		c.Add(1)
		return each(b, r)
	}
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
