package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// k8sStart is a common start two days ahead, in whole seconds: within
// the range k8s job accepts whenever the test runs.
var k8sStart = time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)

// k8sBase are the required flags of k8s job.
var k8sBase = []string{"k8s", "job", "--shards", "3", "--image", "benchseal:dev", "--endpoint", "http://127.0.0.1:8000",
	"--model", "m", "--push", "127.0.0.1:5000/bench/run:v1"}

// decodeJobYAML decodes the last document of a rendering strictly into a
// Job, and the ConfigMap before it when there is one.
func decodeJobYAML(t *testing.T, s string) (*batchv1.Job, *corev1.ConfigMap) {
	t.Helper()
	docs := strings.Split(s, "---\n")
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[len(docs)-1]), &job); err != nil {
		t.Fatalf("strict decode: %v\n%s", err, s)
	}
	var cm *corev1.ConfigMap
	if len(docs) == 3 {
		cm = &corev1.ConfigMap{}
		if err := yaml.UnmarshalStrict([]byte(docs[1]), cm); err != nil {
			t.Fatalf("strict decode of the ConfigMap: %v", err)
		}
	}
	return &job, cm
}

func podContainer(job *batchv1.Job, name string) corev1.Container {
	s := job.Spec.Template.Spec
	for _, c := range append(slices.Clone(s.InitContainers), s.Containers...) {
		if c.Name == name {
			return c
		}
	}
	return corev1.Container{}
}

func TestK8sJobFlagsToJobFields(t *testing.T) {
	dir := t.TempDir()
	planPath := filepath.Join(dir, "load.json")
	loadPlan := `{"mode": "concurrency", "points": [{"name": "c4", "concurrency": 4, "requests": 100}], "seed": 7}` + "\n"
	if err := os.WriteFile(planPath, []byte(loadPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		check func(*testing.T, *batchv1.Job, *corev1.ConfigMap)
	}{
		{"shards and capture flags after --", []string{"--", "--rate", "800", "--requests", "2000"}, func(t *testing.T, j *batchv1.Job, cm *corev1.ConfigMap) {
			if *j.Spec.Completions != 3 || *j.Spec.Parallelism != 3 || *j.Spec.CompletionMode != batchv1.IndexedCompletion || cm != nil {
				t.Errorf("spec %+v cm %v", j.Spec, cm)
			}
			args := podContainer(j, "capture").Args
			if !slices.Equal(args[len(args)-4:], []string{"--rate", "800", "--requests", "2000"}) || argAfter(args, "--shards") != "3" {
				t.Errorf("capture args %q", args)
			}
			if got := podContainer(j, "push").Args[2]; got != "127.0.0.1:5000/bench/run:v1-shard-$(JOB_COMPLETION_INDEX)" {
				t.Errorf("push ref %q", got)
			}
		}},
		{"plan in a ConfigMap", []string{"--plan", planPath, "--name", "b1"}, func(t *testing.T, j *batchv1.Job, cm *corev1.ConfigMap) {
			if cm == nil || cm.Name != "b1-plan" || cm.Data["plan.json"] != loadPlan || j.Name != "b1" {
				t.Fatalf("cm %+v job %s", cm, j.Name)
			}
		}},
		{"start-at, anti-affinity, requests, secrets", []string{"--start-at", k8sStart.In(time.FixedZone("", 3600)).Format(time.RFC3339), "--anti-affinity", "--cpu", "2", "--memory", "1Gi",
			"--registry-secret", "regcred", "--api-key-secret", "ek", "--key-secret", "sk", "--plain-http", "--image-pull-policy", "Never", "--namespace", "load",
			"--", "--concurrency", "8", "--requests", "80"}, func(t *testing.T, j *batchv1.Job, _ *corev1.ConfigMap) {
			c := podContainer(j, "capture")
			if argAfter(c.Args, "--start-at") != k8sStart.Format(time.RFC3339) || c.Resources.Requests.Cpu().String() != "2" || c.ImagePullPolicy != corev1.PullNever {
				t.Errorf("capture %+v", c)
			}
			if a := j.Spec.Template.Spec.Affinity; a == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Errorf("bare --anti-affinity is not required: %+v", a)
			}
			if p := podContainer(j, "push"); p.Args[len(p.Args)-1] != "--plain-http" {
				t.Errorf("push %q", p.Args)
			}
			if j.Namespace != "load" || j.Spec.Template.Spec.Volumes[1].Secret.SecretName != "sk" {
				t.Errorf("namespace %q volumes %+v", j.Namespace, j.Spec.Template.Spec.Volumes)
			}
		}},
		{"preferred anti-affinity", []string{"--anti-affinity=preferred", "--", "--concurrency", "8", "--requests", "80"}, func(t *testing.T, j *batchv1.Job, _ *corev1.ConfigMap) {
			if a := j.Spec.Template.Spec.Affinity; a == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Errorf("affinity %+v", a)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, nil, append(slices.Clone(k8sBase), c.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			j, cm := decodeJobYAML(t, out)
			c.check(t, j, cm)
		})
	}
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func TestK8sJobOutFileIsWritten(t *testing.T) {
	out := filepath.Join(t.TempDir(), "job.yaml")
	code, stdout, errOut := runArgs(t, nil, append(slices.Clone(k8sBase), "--out", out, "--", "--rate", "5", "--requests", "10")...)
	if code != ExitOK || stdout != "" || !strings.Contains(errOut, "wrote "+out) {
		t.Fatalf("exit %d stdout %q stderr %q", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	decodeJobYAML(t, string(b))
}

func TestK8sJobBadFlagsAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badPlan := filepath.Join(dir, "bad.json")
	os.WriteFile(badPlan, []byte(`{"mode": "closed", "points": []}`), 0o644)
	durPlan := filepath.Join(dir, "dur.json")
	os.WriteFile(durPlan, []byte(`{"mode": "concurrency", "points": [{"concurrency": 4, "duration": "60s"}], "seed": 1}`), 0o644)
	base := func(drop string, extra ...string) []string {
		var a []string
		for i := 0; i < len(k8sBase); i++ {
			if k8sBase[i] == drop {
				i++
				continue
			}
			a = append(a, k8sBase[i])
		}
		return append(a, extra...)
	}
	load := []string{"--", "--rate", "5", "--requests", "10"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no shards", base("--shards", load...), `"shards" not set`},
		{"no image", base("--image", load...), `"image" not set`},
		{"zero shards", append(base("--shards", "--shards", "0"), load...), "shards 0"},
		{"shards not a number", append(base("--shards", "--shards", "x"), load...), "invalid argument"},
		{"no load", base(""), "no load"},
		{"unknown capture flag", base("", "--", "--rat", "5"), "unknown flag: --rat"},
		{"capture positional", base("", "--", "--rate", "5", "extra"), `unexpected argument "extra"`},
		{"argument before --", base("", "extra"), `unexpected argument "extra"`},
		{"reserved capture flag", base("", "--", "--rate", "5", "--out", "x"), "--out after"},
		{"local prompts file", base("", "--", "--rate", "5", "--prompts", "p.jsonl"), "does not travel into the pods"},
		{"local manifest file", base("", "--", "--rate", "5", "--manifest=m.json"), "does not travel into the pods"},
		{"server metrics", base("", "--", "--rate", "5", "--server-metrics", "http://h/metrics"), "shards do not scrape"},
		{"prefix cache reset", base("", "--", "--rate", "5", "--reset-prefix-cache"), "under the others' load"},
		{"help", base("", "--", "--rate", "5", "--help"), "help"},
		{"load flag beside plan", base("", "--plan", badPlan, "--", "--rate", "5", "--requests", "10"), "--plan sets the load"},
		{"duration-bounded closed loop", base("", "--", "--concurrency", "4", "--duration", "60s"), "a sharded closed-loop point needs a request count"},
		{"duration-bounded closed-loop plan", base("", "--plan", durPlan), "a sharded closed-loop point needs a request count"},
		{"duration-bounded closed-loop warmup", base("", "--", "--concurrency", "4", "--requests", "40", "--warmup-duration", "5s"), "warmup needs a request count"},
		{"invalid plan", base("", "--plan", badPlan), "--plan"},
		{"bad start-at", base("", append([]string{"--start-at", "tomorrow"}, load...)...), "RFC 3339"},
		{"start-at before 1678", base("", append([]string{"--start-at", "1600-01-01T00:00:00Z"}, load...)...), "more than a day in the past"},
		{"start-at two days ago", base("", append([]string{"--start-at", time.Now().Add(-48 * time.Hour).Format(time.RFC3339)}, load...)...), "more than a day in the past"},
		{"start-at in 9999", base("", append([]string{"--start-at", "9999-12-31T23:59:59Z"}, load...)...), "more than 30 days ahead"},
		{"bad anti-affinity", base("", append([]string{"--anti-affinity=always"}, load...)...), "anti-affinity"},
		{"bad memory", base("", append([]string{"--memory", "lots"}, load...)...), "memory request"},
		{"push by digest", append(base("--push", "--push", "h/r@sha256:"+strings.Repeat("a", 64)), load...), "digest"},
		{"endpoint without scheme", append(base("--endpoint", "--endpoint", "h:80"), load...), "endpoint"},
		{"more shards than closed-loop workers", base("", "--", "--concurrency", "2,8", "--requests", "30"), `3 shards, but closed-loop point "c2" has concurrency 2`},
		{"bad pull policy", base("", append([]string{"--image-pull-policy", "Sometimes"}, load...)...), "--image-pull-policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, nil, c.args...)
			if code != ExitUsage || !strings.Contains(errOut, c.want) || out != "" {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, c.want, out, errOut)
			}
		})
	}
}

// TestK8sJobUnreadablePlanIsAFileError: a --plan file that cannot be read
// is an operational error (exit 1, as the README's table says), not a
// usage error; capture's --plan says the same.
func TestK8sJobUnreadablePlanIsAFileError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	for _, args := range [][]string{
		append(slices.Clone(k8sBase), "--plan", missing),
		{"capture", "--simulate", "--plan", missing, "--out", filepath.Join(t.TempDir(), "run")},
	} {
		code, out, errOut := runArgs(t, nil, args...)
		if code != ExitError || !strings.Contains(errOut, "--plan: open "+missing) || out != "" {
			t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args[0], code, ExitError, out, errOut)
		}
	}
}

// TestK8sJobStepsParseWithTheirCommands parses each pod step's arguments
// (after the kubelet's $$ unescaping, with the completion index expanded)
// with the flags of the benchseal command it runs, so the Job and the
// commands cannot drift apart.
func TestK8sJobStepsParseWithTheirCommands(t *testing.T) {
	dir := t.TempDir()
	planPath := filepath.Join(dir, "load.json")
	os.WriteFile(planPath, []byte(`{"mode": "rate", "points": [{"name": "r8", "rate": 8, "requests": 80}], "seed": 7}`), 0o644)
	args := append(slices.Clone(k8sBase), "--plan", planPath, "--start-at", k8sStart.Format(time.RFC3339), "--api-key-secret", "k", "--plain-http",
		"--model", "m$(X)")
	code, out, errOut := runArgs(t, nil, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	job, _ := decodeJobYAML(t, out)
	io := &IO{Getenv: func(string) string { return "" }}
	cmds := map[string]func(*IO) *cobra.Command{"capture": newCaptureCmd, "pack": newPackCmd, "push": newPushCmd}
	for _, step := range []string{"capture", "pack", "push"} {
		c := podContainer(job, step)
		if len(c.Args) == 0 || c.Args[0] != step {
			t.Fatalf("%s: args %q", step, c.Args)
		}
		kubelet := make([]string, len(c.Args)-1)
		for i, a := range c.Args[1:] {
			kubelet[i] = strings.ReplaceAll(strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", "2"), "$$", "$")
		}
		cmd := cmds[step](io)
		if err := cmd.Flags().Parse(kubelet); err != nil {
			t.Errorf("%s %q: %v", step, kubelet, err)
			continue
		}
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			t.Errorf("%s %q: %v", step, kubelet, err)
		}
		if err := cmd.ValidateRequiredFlags(); err != nil {
			t.Errorf("%s %q: %v", step, kubelet, err)
		}
		switch step {
		case "capture":
			if got := cmd.Flags().Lookup("model").Value.String(); got != "m$(X)" {
				t.Errorf("capture --model %q after the kubelet's expansion", got)
			}
		case "push":
			if got := cmd.Flags().Args(); len(got) != 2 || got[1] != "127.0.0.1:5000/bench/run:v1-shard-2" {
				t.Errorf("push arguments %q", got)
			}
		}
	}
}

func TestK8sJobHonoursThePlansStart(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.json")
	if code, _, errOut := runArgs(t, nil, "plan", "init", "--out", p, "--rate", "8", "--requests", "40", "--seed", "3",
		"--input-tokens", "8", "--output-tokens", "8", "--slo", "ttft=2s,e2e=10s,tpot=1s"); code != ExitOK {
		t.Fatalf("plan init: %s", errOut)
	}
	b, _ := os.ReadFile(p)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["start_at"] = k8sStart.Format(time.RFC3339)
	b, _ = json.Marshal(doc)
	os.WriteFile(p, b, 0o644)
	base := append(slices.Clone(k8sBase), "--plan", p)
	for _, c := range []struct {
		name     string
		extra    []string
		code     int
		stderr   string
		startArg string
	}{
		{"plan's start, no flag", nil, ExitOK, "", ""},
		{"the same start given", []string{"--start-at", k8sStart.In(time.FixedZone("", 3600)).Format(time.RFC3339)}, ExitOK, "", ""},
		{"another start given", []string{"--start-at", k8sStart.Add(time.Second).Format(time.RFC3339)}, ExitUsage, "the pre-registered plan starts at " + k8sStart.Format(time.RFC3339), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, nil, append(slices.Clone(base), c.extra...)...)
			if code != c.code || !strings.Contains(errOut, c.stderr) || strings.Contains(errOut, "warning") {
				t.Fatalf("exit %d, want %d with %q\n%s", code, c.code, c.stderr, errOut)
			}
			if code != ExitOK {
				return
			}
			job, cm := decodeJobYAML(t, out)
			if got := argAfter(podContainer(job, "capture").Args, "--start-at"); got != c.startArg {
				t.Errorf("capture --start-at %q, want the plan's start to be read by capture", got)
			}
			if cm == nil || !strings.Contains(cm.Data["plan.json"], `"start_at":"`+k8sStart.Format(time.RFC3339)+`"`) {
				t.Errorf("the ConfigMap does not carry the plan as given")
			}
		})
	}
	// Without any start the shards would begin whenever their pods do.
	_, _, errOut := runArgs(t, nil, append(slices.Clone(k8sBase), "--", "--rate", "5", "--requests", "10")...)
	if !strings.Contains(errOut, "warning: no --start-at") {
		t.Errorf("no warning without a common start: %q", errOut)
	}
}
