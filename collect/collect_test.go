package collect_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/artifact/registry"
	"github.com/benchseal/benchseal/artifact/registry/registrytest"
	"github.com/benchseal/benchseal/collect"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

const repo = "bench/run"

// pushShards pushes a signed bundle to REF-shard-I for each index and
// returns the fake registry and REF.
func pushShards(t *testing.T, indexes ...int) (*registrytest.Fake, string, *artifact.PublicKey) {
	t.Helper()
	f, host := registrytest.NewFake(t, false)
	b, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	ref := host + "/" + repo + ":v1"
	for _, i := range indexes {
		if _, err := registry.Push(context.Background(), b, ref+"-shard-"+strconv.Itoa(i), registry.Options{PlainHTTP: true}); err != nil {
			t.Fatal(err)
		}
	}
	return f, ref, pub
}

func options(t *testing.T, pub *artifact.PublicKey) collect.Options {
	t.Helper()
	v, err := verify.NewVerifier([]*artifact.PublicKey{pub})
	if err != nil {
		t.Fatal(err)
	}
	return collect.Options{Registry: registry.Options{PlainHTTP: true}, Verifier: v}
}

func TestShardsPullsVerifiesAndUnpacksEveryShard(t *testing.T) {
	_, ref, pub := pushShards(t, 0, 1, 2)
	dir := t.TempDir()
	res, err := collect.Shards(context.Background(), ref, 3, dir, options(t, pub))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Shards) != 3 || len(res.Missing) != 0 {
		t.Fatalf("result %+v", res)
	}
	for i, s := range res.Shards {
		if s.Index != i || s.Ref != ref+"-shard-"+strconv.Itoa(i) || !s.Result.Verified || !s.Result.Authenticated {
			t.Errorf("shard %d: %+v", i, s)
		}
		if _, err := schema.CheckRunDir(context.Background(), s.RunDir, 5, nil); err != nil {
			t.Errorf("shard %d: unpacked run invalid: %v", i, err)
		}
	}
	if got := res.RunDirs(); len(got) != 3 || got[2] != filepath.Join(dir, "shard-2") {
		t.Errorf("run dirs %v", got)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"shard-0", "shard-1", "shard-2"}) {
		t.Errorf("working directory holds %v: the pulled tars were not removed", names)
	}
}

func TestShardsMissingShard(t *testing.T) {
	_, ref, pub := pushShards(t, 0, 2)
	o := options(t, pub)
	_, err := collect.Shards(context.Background(), ref, 3, t.TempDir(), o)
	if !errors.Is(err, collect.ErrMissing) {
		t.Fatalf("err %v, want ErrMissing", err)
	}
	o.AllowMissing = true
	res, err := collect.Shards(context.Background(), ref, 3, t.TempDir(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Shards) != 2 || !slices.Equal(res.Missing, []int{1}) {
		t.Fatalf("shards %d missing %v", len(res.Shards), res.Missing)
	}
}

func TestShardsRejectsAnotherSigner(t *testing.T) {
	_, ref, _ := pushShards(t, 0)
	o := options(t, artifacttest.Reviewer(t).Public())
	_, err := collect.Shards(context.Background(), ref, 1, t.TempDir(), o)
	if !errors.Is(err, collect.ErrRejected) || !errors.Is(err, verify.ErrRejected) {
		t.Fatalf("err %v, want ErrRejected", err)
	}
}

func TestShardsRejectsATamperedBlob(t *testing.T) {
	f, ref, pub := pushShards(t, 0, 1)
	b, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	opened, err := artifact.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	d := opened.RecordLayers()[0].Descriptor.Digest
	opened.Close()
	body := f.Blob(repo, d)
	body[len(body)/2] ^= 1
	f.SetBlob(repo, d, body)
	dir := t.TempDir()
	_, err = collect.Shards(context.Background(), ref, 2, dir, options(t, pub))
	if !errors.Is(err, collect.ErrRejected) || !errors.Is(err, artifact.ErrInvalid) {
		t.Fatalf("err %v, want ErrRejected wrapping ErrInvalid", err)
	}
}

func TestShardsBadReference(t *testing.T) {
	_, err := collect.Shards(context.Background(), "h/r@sha256:"+string(make([]byte, 0)), 2, t.TempDir(), options(t, artifacttest.Publisher(t).Public()))
	if !errors.Is(err, registry.ErrReference) {
		t.Fatalf("err %v", err)
	}
}
