package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/artifact/registry"
	"github.com/benchseal/benchseal/artifact/registry/registrytest"
	"github.com/benchseal/benchseal/schema"
)

// pushedShards captures n shards with the simulator, packs each signed
// by the publisher test key and pushes shard I (for I in push) to
// REF-shard-I of a fake registry. It returns REF and the publisher's
// public key file.
func pushedShards(t *testing.T, n int, push ...int) (string, string) {
	t.Helper()
	dir := t.TempDir()
	_, host := registrytest.NewFake(t, false)
	ref := host + "/bench/run:v1"
	for _, i := range push {
		run := filepath.Join(dir, "s"+strconv.Itoa(i))
		code, _, errOut := runArgs(t, nil, "capture", "--simulate", "--sim-time-scale", "0.01", "--rate", "400", "--requests", "12",
			"--seed", "7", "--shard", strconv.Itoa(i)+"/"+strconv.Itoa(n), "--out", run, "--progress", "never")
		if code != ExitOK {
			t.Fatalf("capture shard %d: exit %d: %s", i, code, errOut)
		}
		b := run + ".tar"
		if _, err := artifact.Pack(context.Background(), run, b, artifact.PackOptions{Signer: artifacttest.Publisher(t)}); err != nil {
			t.Fatal(err)
		}
		if _, err := registry.Push(context.Background(), b, ref+"-shard-"+strconv.Itoa(i), registry.Options{PlainHTTP: true}); err != nil {
			t.Fatal(err)
		}
	}
	pub := filepath.Join(dir, "publisher.pub")
	if err := os.WriteFile(pub, artifacttest.Publisher(t).Public().PEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return ref, pub
}

func TestMergePullVerifiesAndMergesTheShards(t *testing.T) {
	ref, pub := pushedShards(t, 2, 0, 1)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, errOut := runArgs(t, nil, "merge", "--pull", ref, "--shards", "2", "--key", pub, "--plain-http", "--out", out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	for _, want := range []string{"pulled shard 0: " + ref + "-shard-0", "pulled shard 1: " + ref + "-shard-1", ") verified, signed by key sha256:", "merged 2 shard run(s) of 2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, errOut := runArgs(t, nil, "validate", out); code != ExitOK {
		t.Errorf("the merged run does not validate: %s", errOut)
	}
	// A second merge into the same --out is refused; the first is kept.
	if code, _, _ := runArgs(t, nil, "merge", "--pull", ref, "--shards", "2", "--key", pub, "--plain-http", "--out", out); code == ExitOK {
		t.Error("merged over an existing run")
	}
}

// TestMergePullRecordsHowEachShardWasAuthenticated: the merged manifest
// names, per member, the bundle merge --pull took it from and who signed
// it, or that nothing was authenticated (--allow-unsigned); verify of the
// packed merged run warns UNVERIFIED about unauthenticated members and
// about members merged from directories, and not about signed ones.
func TestMergePullRecordsHowEachShardWasAuthenticated(t *testing.T) {
	ref, pub := pushedShards(t, 2, 0, 1)
	dir := t.TempDir()
	verifyMerged := func(run string) (*schema.Manifest, string) {
		t.Helper()
		f, err := os.Open(filepath.Join(run, schema.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := schema.DecodeManifest(f, schema.ManifestFile)
		if err != nil {
			t.Fatal(err)
		}
		b := run + ".tar"
		if _, err := artifact.Pack(context.Background(), run, b, artifact.PackOptions{Signer: artifacttest.Publisher(t)}); err != nil {
			t.Fatal(err)
		}
		code, stdout, errOut := runArgs(t, nil, "verify", b, "--key", pub)
		if code != ExitOK {
			t.Fatalf("verify: exit %d\n%s\n%s", code, stdout, errOut)
		}
		return m, stdout + errOut
	}
	for _, c := range []struct {
		flag, by, warn string
	}{
		// pulled.authenticated is the merger's word
		// (nothing in the bundle proves it), so even a signed member's
		// origin is UNVERIFIED.
		{"--key", "key sha256:", "UNVERIFIED shard origin: shard(s) 0, 1 pulled with a signature the merger says it checked"},
		{"--allow-unsigned", schema.ShardPullUnsigned, "UNVERIFIED shard origin: shard(s) 0, 1 pulled with merge --pull --allow-unsigned"},
	} {
		out := filepath.Join(dir, strings.TrimPrefix(c.flag, "--"))
		args := []string{"merge", "--pull", ref, "--shards", "2", "--plain-http", "--out", out, c.flag}
		if c.flag == "--key" {
			args = append(args, pub)
		}
		if code, stdout, errOut := runArgs(t, nil, args...); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", c.flag, code, stdout, errOut)
		}
		m, said := verifyMerged(out)
		for i, mb := range m.Shards.Members {
			p := mb.Pulled
			if p == nil || p.Ref != ref+"-shard-"+strconv.Itoa(i) || !strings.HasPrefix(p.BundleDigest, "sha256:") ||
				p.Authenticated != (c.flag == "--key") || !strings.HasPrefix(p.By, c.by) {
				t.Errorf("%s: member %d pulled = %+v", c.flag, i, p)
			}
		}
		if !strings.Contains(said, c.warn) {
			t.Errorf("%s: verify said (want %q):\n%s", c.flag, c.warn, said)
		}
	}
	// Shards merged from directories: nothing of them was authenticated.
	local := filepath.Join(dir, "local")
	for i := range 2 {
		run := filepath.Join(dir, "d"+strconv.Itoa(i))
		if code, _, errOut := runArgs(t, nil, "capture", "--simulate", "--sim-time-scale", "0.01", "--rate", "400", "--requests", "12",
			"--seed", "7", "--shard", strconv.Itoa(i)+"/2", "--out", run, "--progress", "never"); code != ExitOK {
			t.Fatal(errOut)
		}
	}
	if code, _, errOut := runArgs(t, nil, "merge", filepath.Join(dir, "d0"), filepath.Join(dir, "d1"), "--out", local); code != ExitOK {
		t.Fatal(errOut)
	}
	if _, said := verifyMerged(local); !strings.Contains(said, "UNVERIFIED shard origin: shard(s) 0, 1 merged from local directories") {
		t.Errorf("local merge: verify said:\n%s", said)
	}
}

func TestMergePullRefusals(t *testing.T) {
	ref, pub := pushedShards(t, 2, 0)
	dir := t.TempDir()
	other := filepath.Join(dir, "reviewer.pub")
	os.WriteFile(other, artifacttest.Reviewer(t).Public().PEM(), 0o644)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing shard", []string{"--shards", "2", "--key", pub}, ExitRejected, "shard missing from the registry"},
		{"another signer", []string{"--shards", "1", "--key", other}, ExitRejected, "shard bundle rejected"},
		{"missing shard allowed", []string{"--shards", "2", "--key", pub, "--allow-incomplete"}, ExitOK, "MISSING"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			code, stdout, errOut := runArgs(t, nil, append([]string{"merge", "--pull", ref, "--plain-http", "--out", out}, c.args...)...)
			if code != c.code || !strings.Contains(stdout+errOut, c.want) {
				t.Fatalf("exit %d, want %d with %q\n%s\n%s", code, c.code, c.want, stdout, errOut)
			}
			if _, err := os.Stat(out); (err == nil) != (c.code == ExitOK) {
				t.Errorf("--out exists: %v, want %v", err == nil, c.code == ExitOK)
			}
		})
	}
}

func TestMergePullUsage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no shards", []string{"--pull", "h/r:v1", "--key", "k.pub"}, "--pull needs --shards"},
		{"too many shards", []string{"--pull", "h/r:v1", "--key", "k.pub", "--shards", "4097"}, "--shards 4097: want 1..4096"},
		{"shard dirs too", []string{"--pull", "h/r:v1", "--shards", "2", "--key", "k.pub", "s0"}, "give no shard directories"},
		{"no key", []string{"--pull", "h/r:v1", "--shards", "2"}, "needs at least one --key"},
		{"key and allow-unsigned", []string{"--pull", "h/r:v1", "--shards", "2", "--key", "k.pub", "--allow-unsigned"}, "cannot be used together"},
		{"key without pull", []string{"s0", "--key", "k.pub"}, "--key goes with --pull"},
		{"digest reference", []string{"--pull", "h/r@sha256:" + strings.Repeat("a", 64), "--shards", "2", "--allow-unsigned"}, "digest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, errOut := runArgs(t, nil, append([]string{"merge", "--out", out}, c.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, want %d with %q\n%s\n%s", code, ExitUsage, c.want, stdout, errOut)
			}
		})
	}
}

// TestMergePullKilledLeavesNothingTheNextRunKeeps: merge --pull killed
// with SIGKILL while pulling leaves its staging beside --out, never in
// $TMPDIR, and the next merge into that --out removes it.
func TestMergePullKilledLeavesNothingTheNextRunKeeps(t *testing.T) {
	ref, pub := pushedShards(t, 2, 0, 1)
	host, path, _ := strings.Cut(ref, "/")
	// A proxy that holds every request until the child has been killed.
	arrived := make(chan struct{}, 1)
	gate := make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-gate
		httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: host}).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	released := false
	release := func() {
		if !released {
			released = true
			close(gate)
		}
	}
	defer release()
	pref := strings.TrimPrefix(proxy.URL, "http://") + "/" + path
	tmp := t.TempDir()
	outDir := t.TempDir()
	out := filepath.Join(outDir, "run")
	cmd := exec.Command(os.Args[0], "merge", "--pull", pref, "--shards", "2", "--key", pub, "--plain-http", "--out", out)
	cmd.Env = append(os.Environ(), "BENCHSEAL_TEST_MAIN=1", "TMPDIR="+tmp)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-arrived: // the staging exists: the pull has begun
	case err := <-exited:
		t.Fatalf("merge --pull ended before pulling: %v", err)
	}
	cmd.Process.Kill()
	<-exited
	release()
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("the killed merge --pull left %s in $TMPDIR", ents[0].Name())
	}
	if code, stdout, errOut := runArgs(t, nil, "merge", "--pull", pref, "--shards", "2", "--key", pub, "--plain-http", "--out", out); code != ExitOK {
		t.Fatalf("next merge: exit %d\n%s\n%s", code, stdout, errOut)
	}
	ents, _ := os.ReadDir(outDir)
	if len(ents) != 1 || ents[0].Name() != "run" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("beside --out after the next merge: %q, want only run", names)
	}
}

// TestMergePullRefusesAnOutputBeforePulling: an --out local merge would
// refuse (not empty; empty name) is refused by merge --pull with the same
// message and exit code, before a single request reaches the registry.
func TestMergePullRefusesAnOutputBeforePulling(t *testing.T) {
	fake, _ := registrytest.NewFake(t, false)
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/bench/run:v1"
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(t.TempDir(), "s0")
	if code, _, errOut := runArgs(t, nil, "capture", "--simulate", "--sim-time-scale", "0.01", "--rate", "400", "--requests", "4",
		"--seed", "7", "--shard", "0/1", "--out", shard, "--progress", "never"); code != ExitOK {
		t.Fatalf("capture: exit %d: %s", code, errOut)
	}
	for _, c := range []struct{ name, out, want string }{
		{"not empty", full, "it exists and is not empty"},
		{"no name", "", "no output directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			localCode, _, localErr := runArgs(t, nil, "merge", shard, "--out", c.out)
			if localCode == ExitOK || !strings.Contains(localErr, c.want) {
				t.Fatalf("local merge: exit %d, want a refusal with %q\n%s", localCode, c.want, localErr)
			}
			requests.Store(0)
			code, stdout, errOut := runArgs(t, nil, "merge", "--pull", ref, "--shards", "1", "--allow-unsigned", "--plain-http", "--out", c.out)
			if code != localCode || errOut != localErr {
				t.Errorf("merge --pull: exit %d, want %d as a local merge\n%s\nwant stderr\n%s", code, localCode, errOut, localErr)
			}
			if strings.Contains(stdout, "pulled shard") {
				t.Errorf("merge --pull pulled before refusing --out:\n%s", stdout)
			}
			if n := requests.Load(); n != 0 {
				t.Errorf("merge --pull sent %d request(s) to the registry before refusing --out", n)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(full, "keep")); err != nil || string(b) != "old" {
		t.Errorf("the refused --out was changed: %q, %v", b, err)
	}
}
