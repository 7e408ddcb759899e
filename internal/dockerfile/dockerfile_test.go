package dockerfile

import (
	"bufio"
	"debug/elf"
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

// TestDockerfileBuildCommandBuildsStaticBinary runs the go build of the
// Dockerfile's build stage (output redirected to a temporary directory)
// and checks the result is statically linked and runs.
func TestDockerfileBuildCommandBuildsStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var build string
	for _, in := range parse(t, filepath.Join(root(t), "Dockerfile")) {
		if in.op == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	m := regexp.MustCompile(`^CGO_ENABLED=0 go build (-trimpath) -ldflags "([^"]*)" -o /out/benchseal (\./cmd/benchseal)$`).FindStringSubmatch(build)
	if m == nil {
		t.Fatalf("build command %q: want CGO_ENABLED=0 go build -trimpath -ldflags \"...\" -o /out/benchseal ./cmd/benchseal", build)
	}
	ldflags := strings.ReplaceAll(m[2], "${VERSION}", "9.9.9-dockerfile-test")
	out := filepath.Join(t.TempDir(), "benchseal")
	cmd := exec.Command("go", "build", m[1], "-ldflags", ldflags, "-o", out, m[3])
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
