package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func readRepo(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeInstallMatchesTheRepository: the install page's (docs/install.md,
// linked from the README) go install line names go.mod's module path and
// the command's package; the keyless identity it tells users to pass is the one the workflow file
// documents and signs as (its own path, on a tag); the workflow runs the
// Makefile's release target with the Makefile's cosign and the
// Dockerfile's Go.
func TestReadmeInstallMatchesTheRepository(t *testing.T) {
	readme, gomod := readRepo(t, "docs/install.md"), readRepo(t, "go.mod")
	wf, mk, df := readRepo(t, ".github/workflows/release.yml"), readRepo(t, "Makefile"), readRepo(t, "Dockerfile")
	mod := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(gomod)
	if mod == nil {
		t.Fatal("go.mod: no module line")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "cmd", "benchseal", "main.go")); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^go install ` + regexp.QuoteMeta(mod[1]) + `/cmd/benchseal@vX\.Y\.Z$`).MatchString(readme) {
		t.Errorf("docs/install.md: no 'go install %s/cmd/benchseal@vX.Y.Z'", mod[1])
	}
	const identity = "https://github.com/benchseal/benchseal/.github/workflows/release.yml@refs/tags/"
	const issuer = "https://token.actions.githubusercontent.com"
	for name, text := range map[string]string{"docs/install.md": readme, "release.yml": wf} {
		if !strings.Contains(text, identity) || !strings.Contains(text, issuer) {
			t.Errorf("%s: the keyless identity %s… / %s is not named", name, identity, issuer)
		}
	}
	if !strings.HasPrefix(identity, "https://"+mod[1]+"/") {
		t.Errorf("identity %s is not of the module's repository %s", identity, mod[1])
	}
	if !strings.Contains(wf, `/.github/workflows/release.yml@${GITHUB_REF}`) || !strings.Contains(wf, `tags: ["v*.*.*"]`) || !strings.Contains(wf, "id-token: write") {
		t.Error("release.yml: not signing as its own path on a tag with an OIDC token")
	}
	if !strings.Contains(wf, `make release VERSION="${GITHUB_REF_NAME}"`) || !regexp.MustCompile(`(?m)^release:`).MatchString(mk) {
		t.Error("release.yml does not run the Makefile's release target")
	}
	cosign := regexp.MustCompile(`(?m)^COSIGN_VERSION\s*:=\s*(\S+)$`).FindStringSubmatch(mk)
	if cosign == nil || !strings.Contains(wf, "cosign-release: "+cosign[1]) {
		t.Errorf("release.yml: cosign is not the Makefile's %v", cosign)
	}
	gov := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindStringSubmatch(df)
	if gov == nil || !strings.Contains(wf, `go-version: "`+gov[1]+`"`) {
		t.Errorf("release.yml: Go is not the Dockerfile's %v", gov)
	}
}

// TestDocsUseOneVersionPlaceholder: no release is published yet, so the
// docs name benchseal's version as vX.Y.Z wherever a release would go
// (install.md gave v0.3.0, which does not exist, and sharding.md v0.1.0),
// and install.md says that no release exists.
func TestDocsUseOneVersionPlaceholder(t *testing.T) {
	install := readRepo(t, "docs/install.md")
	if !strings.Contains(install, "No release is published yet") {
		t.Error("docs/install.md does not say that no release is published yet")
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	release := regexp.MustCompile(`(benchseal@|benchseal:|\bV=|VERSION=|refs/tags/)v\d+\.\d+\.\d+`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if m := release.FindString(l); m != "" {
				t.Errorf("%s:%d: %q names a release; no release is published yet: write vX.Y.Z", f, i+1, m)
			}
		}
	}
}
