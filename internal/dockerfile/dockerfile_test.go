package dockerfile

import (
	"bufio"
	"debug/elf"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/k8s"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int
	op   string // upper case
	args string
}

func parse(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (l == "" || strings.HasPrefix(l, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		cur.WriteString(l)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{start, strings.ToUpper(op), strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// root is the repository root.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDockerfileShape checks what the Kubernetes Job relies on: a golang
// build stage, a distroless/static final stage (no shell: the Job runs the
// binary's own commands only), the user the pods run as, and an
// entrypoint that is the binary copied from the build stage.
func TestDockerfileShape(t *testing.T) {
	ins := parse(t, filepath.Join(root(t), "Dockerfile"))
	var froms []instruction
	var last []instruction // instructions of the final stage
	args := map[string]string{}
	for _, in := range ins {
		switch in.op {
		case "FROM":
			froms = append(froms, in)
			last = nil
		case "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		}
		last = append(last, in)
	}
	if len(froms) != 2 {
		t.Fatalf("want two stages (build, final), got %d FROM", len(froms))
	}
	if !regexp.MustCompile(`^docker\.io/library/golang:\$\{GO_VERSION\}-\S+ AS build$`).MatchString(froms[0].args) {
		t.Errorf("line %d: build stage %q: want the pinned golang image AS build", froms[0].line, froms[0].args)
	}
	if gv := args["GO_VERSION"]; !regexp.MustCompile(`^1\.\d+\.\d+$`).MatchString(gv) {
		t.Errorf("GO_VERSION %q: pin a full Go release", gv)
	}
	// A digest after the tag (see the Dockerfile's note on pinning) is allowed.
	if !regexp.MustCompile(`^gcr\.io/distroless/static-\S+:nonroot(@sha256:[0-9a-f]{64})?$`).MatchString(froms[1].args) {
		t.Errorf("line %d: final stage %q: want distroless/static, nonroot", froms[1].line, froms[1].args)
	}
	var user, entry, copied string
	for _, in := range last {
		switch in.op {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entry = in.args
		case "COPY":
			if f := strings.Fields(in.args); len(f) == 3 && f[0] == "--from=build" {
				copied = f[2]
			}
		case "RUN":
			t.Errorf("line %d: RUN in the final stage: distroless has no shell", in.line)
		}
	}
	uid := strconv.Itoa(k8s.RunAsUser)
	if user != uid+":"+uid {
		t.Errorf("USER %q: the Job runs as %s:%s (k8s.RunAsUser)", user, uid, uid)
	}
	if copied == "" || entry != `["`+copied+`"]` {
		t.Errorf("ENTRYPOINT %s is not the binary copied from the build stage (%q)", entry, copied)
	}
}

// dockerBuild is the go build of the Dockerfile's build stage.
type dockerBuild struct {
	line               int
	flag, ldflags, pkg string
}

// buildCommand returns the Dockerfile's go build, which must have the
// form CGO_ENABLED=0 go build -trimpath -ldflags "..." -o /out/benchseal PKG.
func buildCommand(t *testing.T) dockerBuild {
	t.Helper()
	var build instruction
	for _, in := range parse(t, filepath.Join(root(t), "Dockerfile")) {
		if in.op == "RUN" && strings.Contains(in.args, "go build") {
			build = in
		}
	}
	m := regexp.MustCompile(`^CGO_ENABLED=0 go build (-trimpath) -ldflags "([^"]*)" -o /out/benchseal (\./cmd/benchseal)$`).FindStringSubmatch(build.args)
	if m == nil {
		t.Fatalf("Dockerfile:%d: build command %q: want CGO_ENABLED=0 go build -trimpath -ldflags \"...\" -o /out/benchseal ./cmd/benchseal", build.line, build.args)
	}
	return dockerBuild{build.line, m[1], m[2], m[3]}
}

// TestDockerfileBuildMatchesTheMakefile is the cheap half of the
// Dockerfile check, run by make test: the Dockerfile's go build builds the
// package the Makefile's build target and the README build, with the
// Makefile's flags (-trimpath, CGO_ENABLED=0), and its -X sets a string
// variable the cli package declares, from the Dockerfile's VERSION
// argument. make dockerfile-check runs the build itself
// (TestDockerfileBuildCommandBuildsStaticBinary).
func TestDockerfileBuildMatchesTheMakefile(t *testing.T) {
	b := buildCommand(t)
	mk, err := os.ReadFile(filepath.Join(root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mm := regexp.MustCompile(`(?m)^build:\n\t\$\(GO\) build (.*) -o \$\(BIN\) (\S+)$`).FindSubmatch(mk)
	if mm == nil {
		t.Fatal("Makefile: no build target of the form $(GO) build FLAGS -o $(BIN) PKG")
	}
	if string(mm[1]) != b.flag || string(mm[2]) != b.pkg {
		t.Errorf("Dockerfile:%d builds %s %s, the Makefile's build target %s %s", b.line, b.flag, b.pkg, mm[1], mm[2])
	}
	if !regexp.MustCompile(`(?m)^export CGO_ENABLED \?= 0$`).Match(mk) {
		t.Error("Makefile: CGO_ENABLED=0 (as the Dockerfile builds) is not exported")
	}
	readme, err := os.ReadFile(filepath.Join(root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "go install "+b.pkg) {
		t.Errorf("README.md: want the build of %s (go install %s) named", b.pkg, b.pkg)
	}
	dev, err := os.ReadFile(filepath.Join(root(t), "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dev), "make dockerfile-check") {
		t.Error("docs/development.md: want make dockerfile-check named")
	}
	if !regexp.MustCompile(`(?m)^dockerfile-check:`).Match(mk) {
		t.Error("Makefile: no dockerfile-check target (it runs the Dockerfile's build)")
	}
	x := regexp.MustCompile(`-X (\S+)\.(\w+)=\$\{VERSION\}`).FindStringSubmatch(b.ldflags)
	if x == nil {
		t.Fatalf("Dockerfile:%d: -ldflags %q: want -X PKG.Var=${VERSION}", b.line, b.ldflags)
	}
	const module = "github.com/benchseal/benchseal/"
	if !strings.HasPrefix(x[1], module) {
		t.Fatalf("-X %s: not a package of this module", x[1])
	}
	dir := filepath.Join(root(t), filepath.FromSlash(strings.TrimPrefix(x[1], module)))
	if !declaresStringVar(t, dir, x[2]) {
		t.Errorf("-X %s.%s: the package declares no string variable %s, so the image would not say its version", x[1], x[2], x[2])
	}
}

// declaresStringVar tells whether the Go package in dir (tests left out)
// declares a package-level string variable called name.
func declaresStringVar(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files", dir)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name {
						continue
					}
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" {
						return true
					}
					if vs.Type == nil && i < len(vs.Values) {
						if l, ok := vs.Values[i].(*ast.BasicLit); ok && l.Kind == token.STRING {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// TestDockerfileBuildCommandBuildsStaticBinary runs the go build of the
// Dockerfile's build stage (output redirected to a temporary directory)
// and checks the result is statically linked and runs. It compiles the
// whole module again with -trimpath (nothing shared with the test build),
// so make test leaves it out: make dockerfile-check (and make k8s-dryrun)
// set BENCHSEAL_DOCKERFILE_BUILD=1.
func TestDockerfileBuildCommandBuildsStaticBinary(t *testing.T) {
	if os.Getenv("BENCHSEAL_DOCKERFILE_BUILD") == "" {
		t.Skip("builds the whole module again with -trimpath: run make dockerfile-check")
	}
	b := buildCommand(t)
	ldflags := strings.ReplaceAll(b.ldflags, "${VERSION}", "9.9.9-dockerfile-test")
	out := filepath.Join(t.TempDir(), "benchseal")
	cmd := exec.Command("go", "build", b.flag, "-ldflags", ldflags, "-o", out, b.pkg)
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary needs a dynamic loader: distroless/static has none")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary links %v", libs)
	}
	v, err := exec.Command(out, "version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "9.9.9-dockerfile-test") {
		t.Errorf("benchseal version: %v: %s (the -X of the Dockerfile does not set the version)", err, v)
	}
}
