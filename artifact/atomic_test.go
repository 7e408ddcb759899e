package artifact_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/verify"
)

// siblings lists the entries of dir other than the given names.
func siblings(t *testing.T, dir string, except ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		keep := true
		for _, x := range except {
			if e.Name() == x {
				keep = false
			}
		}
		if keep {
			out = append(out, e.Name())
		}
	}
	return out
}

func mustVerify(t *testing.T, p string, keys ...*artifact.PublicKey) {
	t.Helper()
	v, err := verify.NewVerifier(keys)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := v.Verify(context.Background(), p, verify.Policy{}); err != nil || !res.Verified {
		t.Fatalf("%s does not verify: %v", p, err)
	}
}

// TestSignFailureKeepsTheSignedBundle: a write error (a full disk) at any
// step of sign leaves the bundle exactly as it was — still verifying with
// its earlier signature — and nothing beside or inside it; the next sign
// succeeds.
func TestSignFailureKeepsTheSignedBundle(t *testing.T) {
	for _, out := range []string{"b", "b.tar"} {
		steps := map[string]bool{}
		dir := t.TempDir()
		p, pub := artifacttest.SignedBundle(t, filepath.Join(dir, out))
		restore := artifact.SetFault(func(step string) error { steps[step] = true; return nil })
		if _, err := artifact.Sign(context.Background(), p, artifacttest.Reviewer(t)); err != nil {
			t.Fatal(err)
		}
		restore()
		if len(steps) == 0 {
			t.Fatalf("%s: only steps %v seen", out, steps)
		}
		for step := range steps {
			t.Run(out+"/"+step, func(t *testing.T) {
				dir := t.TempDir()
				p, pub := artifacttest.SignedBundle(t, filepath.Join(dir, out))
				defer artifact.SetFault(func(s string) error {
					if s == step {
						return syscall.ENOSPC
					}
					return nil
				})()
				_, err := artifact.Sign(context.Background(), p, artifacttest.Reviewer(t))
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("sign: %v, want ENOSPC", err)
				}
				artifact.SetFault(nil)
				mustVerify(t, p, pub)
				if left := siblings(t, dir, out, out+".sigstore.json"); len(left) > 0 {
					t.Errorf("left beside the bundle: %v", left)
				}
				b, err := artifact.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				if n := len(b.Referrers()); n != 1 {
					t.Errorf("%d referrers after a failed sign, want 1", n)
				}
				b.Close()
			})
		}
		_ = pub
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	return cmd.Process.Pid
}

// TestStaleStagingIsReclaimed: the staging entries of killed pack and sign
// runs (named for the output, their process gone, their lock free) are
// removed by the next run, which says so; those of a live process are
// left alone.
func TestStaleStagingIsReclaimed(t *testing.T) {
	for _, out := range []string{"b", "b.tar"} {
		t.Run(out, func(t *testing.T) {
			dir := t.TempDir()
			stale := filepath.Join(dir, fmt.Sprintf(".%s.benchseal-%d-123", out, deadPID(t)))
			os.MkdirAll(filepath.Join(stale, "blobs", "sha256"), 0o755)
			os.WriteFile(filepath.Join(stale, "blobs", "sha256", "junk"), make([]byte, 4096), 0o644)
			staleFile := filepath.Join(dir, fmt.Sprintf(".%s.benchseal-%d-456", out, deadPID(t)))
			os.WriteFile(staleFile, []byte("half a tar"), 0o644)
			live := filepath.Join(dir, fmt.Sprintf(".%s.benchseal-%d-789", out, os.Getppid()))
			os.Mkdir(live, 0o755)
			other := filepath.Join(dir, ".unrelated.benchseal-1-1")
			os.Mkdir(other, 0o755)

			run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{})
			p := filepath.Join(dir, out)
			res, err := artifact.Pack(context.Background(), run, p, artifact.PackOptions{Created: artifacttest.Created})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res.Reclaimed {
				got = append(got, filepath.Base(r.Path))
			}
			if len(got) != 2 || !strings.Contains(strings.Join(got, " "), "-123") || !strings.Contains(strings.Join(got, " "), "-456") {
				t.Errorf("reclaimed %v, want the two stale entries", got)
			}
			for _, keep := range []string{live, other, p} {
				if _, err := os.Stat(keep); err != nil {
					t.Errorf("%s removed: %v", keep, err)
				}
			}
			// A killed sign's leftover is reclaimed by the next sign.
			stale2 := filepath.Join(dir, fmt.Sprintf(".%s.benchseal-%d-999", out, deadPID(t)))
			os.Mkdir(stale2, 0o755)
			sres, err := artifact.Sign(context.Background(), p, artifacttest.Publisher(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(sres.Reclaimed) != 1 || sres.Reclaimed[0].Path != stale2 {
				t.Errorf("sign reclaimed %v, want %s", sres.Reclaimed, stale2)
			}
			mustVerify(t, p, artifacttest.Publisher(t).Public())
		})
	}
}

// TestPackWithKeyPublishesOnlyTheSignedBundle: pack --key signs before it
// publishes, so a failure (or kill) between packing and signing leaves
// nothing at out, and success leaves a bundle that verifies.
func TestPackWithKeyPublishesOnlyTheSignedBundle(t *testing.T) {
	for _, out := range []string{"b", "b.tar"} {
		t.Run(out, func(t *testing.T) {
			dir := t.TempDir()
			run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{})
			p := filepath.Join(dir, out)
			restore := artifact.SetFault(func(s string) error {
				if s == "pack-publish" {
					return syscall.ENOSPC
				}
				return nil
			})
			_, err := artifact.Pack(context.Background(), run, p, artifact.PackOptions{Created: artifacttest.Created, Signer: artifacttest.Publisher(t)})
			restore()
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("pack: %v, want ENOSPC", err)
			}
			if left := siblings(t, dir); len(left) > 0 {
				t.Fatalf("left after a failed pack --key: %v", left)
			}
			res, err := artifact.Pack(context.Background(), run, p, artifact.PackOptions{Created: artifacttest.Created, Signer: artifacttest.Publisher(t)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Signature == nil || res.Signature.DetachedPath != artifact.DetachedPath(p) {
				t.Fatalf("signature %+v", res.Signature)
			}
			mustVerify(t, p, artifacttest.Publisher(t).Public())
			if left := siblings(t, dir, out, out+".sigstore.json"); len(left) > 0 {
				t.Errorf("left beside the bundle: %v", left)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 && fi.IsDir() {
				t.Errorf("bundle directory mode %v, want 0755", fi.Mode().Perm())
			}
		})
	}
}
