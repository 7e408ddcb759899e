package k8s

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/benchseal/benchseal/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

// full sets every option.
func full() Options {
	return Options{
		Name:           "bench-7",
		Namespace:      "load",
		Shards:         4,
		Image:          "registry.example/benchseal:v0.1.0",
		PullPolicy:     corev1.PullIfNotPresent,
		Endpoint:       "http://vllm.inference.svc:8000",
		Model:          "meta-llama/Llama-3.1-8B-Instruct",
		Plan:           []byte("{\"schema\": \"benchseal/plan/v1\"}\n"),
		StartAt:        time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC),
		CaptureArgs:    []string{"--set", "engine.name=vllm"},
		Push:           "registry.example/bench/run:v1",
		PlainHTTP:      true,
		KeySecret:      "benchseal-signing-key",
		RegistrySecret: "regcred",
		APIKeySecret:   "endpoint-key",
		AntiAffinity:   AntiAffinityRequired,
		CPU:            "2",
		Memory:         "1Gi",
	}
}

// minimal sets only what is required.
func minimal() Options {
	return Options{
		Name:        "bench",
		Shards:      2,
		Image:       "benchseal:dev",
		Endpoint:    "http://127.0.0.1:8000",
		Model:       "m",
		CaptureArgs: []string{"--rate", "100", "--requests", "1000"},
		Push:        "127.0.0.1:5000/bench/run:v1",
		KeySecret:   "benchseal-signing-key",
	}
}

func TestRenderGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{{"job-full", full()}, {"job-minimal", minimal()}} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Render(c.o)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", c.name+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./k8s -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering (rerun with -update if intended):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// decode splits rendered YAML and decodes each document strictly into
// its API type.
func decode(t *testing.T, b []byte) (*corev1.ConfigMap, *batchv1.Job) {
	t.Helper()
	var cm *corev1.ConfigMap
	var job *batchv1.Job
	docs := strings.Split(string(b), "---\n")
	if docs[0] != "" {
		t.Fatalf("rendering does not start with a document separator: %q", docs[0])
	}
	for _, d := range docs[1:] {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(d), &head); err != nil {
			t.Fatal(err)
		}
		switch head.Kind {
		case "ConfigMap":
			cm = &corev1.ConfigMap{}
			if err := yaml.UnmarshalStrict([]byte(d), cm); err != nil {
				t.Fatalf("strict decode of the ConfigMap: %v", err)
			}
		case "Job":
			job = &batchv1.Job{}
			if err := yaml.UnmarshalStrict([]byte(d), job); err != nil {
				t.Fatalf("strict decode of the Job: %v", err)
			}
		default:
			t.Fatalf("unexpected document kind %q", head.Kind)
		}
	}
	if job == nil {
		t.Fatal("no Job in the rendering")
	}
	return cm, job
}

func TestRenderDecodesStrictlyAndRoundTrips(t *testing.T) {
	for name, o := range map[string]Options{"full": full(), "minimal": minimal()} {
		t.Run(name, func(t *testing.T) {
			objs, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			b, err := objs.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			cm, job := decode(t, b)
			if !equality.Semantic.DeepEqual(job, objs.Job) {
				t.Errorf("decoded Job differs from the built one:\n%s", b)
			}
			if (cm == nil) != (objs.ConfigMap == nil) || cm != nil && !equality.Semantic.DeepEqual(cm, objs.ConfigMap) {
				t.Errorf("decoded ConfigMap differs from the built one")
			}
			again, err := (&Objects{ConfigMap: cm, Job: job}).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b) {
				t.Errorf("re-marshalled rendering differs:\n%s\n---\n%s", again, b)
			}
		})
	}
}

func TestStrictDecodeRejectsUnknownField(t *testing.T) {
	b, err := Render(minimal())
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "completionMode: Indexed", "completionMode: Indexed\n  completionsMode: Indexed", 1)
	if bad == string(b) {
		t.Fatal("completionMode not found in the rendering")
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(strings.TrimPrefix(bad, "---\n")), &job); err == nil {
		t.Fatal("strict decoding accepted an unknown field: the round-trip test could not fail")
	}
}

// container returns the named container of the Job's pod.
func container(t *testing.T, job *batchv1.Job, name string) corev1.Container {
	t.Helper()
	spec := job.Spec.Template.Spec
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %q", name)
	return corev1.Container{}
}

// argValue returns the value after flag in args, or "" when absent.
func argValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func TestBuildOptionsToJobFields(t *testing.T) {
	for _, c := range []struct {
		name   string
		modify func(*Options)
		check  func(*testing.T, *Objects)
	}{
		{"shards set completions and parallelism, indexed", func(o *Options) { o.Shards = 7 }, func(t *testing.T, objs *Objects) {
			s := objs.Job.Spec
			if *s.Completions != 7 || *s.Parallelism != 7 || *s.CompletionMode != batchv1.IndexedCompletion {
				t.Errorf("completions %d parallelism %d mode %s", *s.Completions, *s.Parallelism, *s.CompletionMode)
			}
			if got := argValue(container(t, objs.Job, "capture").Args, "--shards"); got != "7" {
				t.Errorf("capture --shards %q", got)
			}
			if *s.BackoffLimitPerIndex != 0 {
				t.Errorf("a failed shard is retried (backoffLimitPerIndex %d)", *s.BackoffLimitPerIndex)
			}
		}},
		{"pipeline: capture, pack with key, push to REF-shard-index", nil, func(t *testing.T, objs *Objects) {
			spec := objs.Job.Spec.Template.Spec
			if len(spec.InitContainers) != 2 || spec.InitContainers[0].Name != "capture" || spec.InitContainers[1].Name != "pack" || len(spec.Containers) != 1 {
				t.Fatalf("containers: %+v %+v", spec.InitContainers, spec.Containers)
			}
			if spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("restartPolicy %s", spec.RestartPolicy)
			}
			pack := container(t, objs.Job, "pack")
			if got := argValue(pack.Args, "--key"); got != KeyDir+"/"+KeyFile {
				t.Errorf("pack --key %q", got)
			}
			push := container(t, objs.Job, "push")
			if want := []string{"push", WorkDir + "/shard.tar", "127.0.0.1:5000/bench/run:v1-shard-$(JOB_COMPLETION_INDEX)"}; !slices.Equal(push.Args, want) {
				t.Errorf("push args %q, want %q", push.Args, want)
			}
			for _, c := range append(spec.InitContainers, spec.Containers...) {
				if c.Env[0].Name != IndexEnv || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
					t.Errorf("%s: %s is not declared from the completion index annotation", c.Name, IndexEnv)
				}
			}
		}},
		{"plan travels in a ConfigMap mounted for capture", func(o *Options) { o.Plan = []byte(`{"x":1}`) }, func(t *testing.T, objs *Objects) {
			if objs.ConfigMap == nil || objs.ConfigMap.Data[PlanFile] != `{"x":1}` || objs.ConfigMap.Name != "bench-plan" {
				t.Fatalf("configmap %+v", objs.ConfigMap)
			}
			c := container(t, objs.Job, "capture")
			if got := argValue(c.Args, "--plan"); got != PlanDir+"/"+PlanFile {
				t.Errorf("capture --plan %q", got)
			}
			if len(c.VolumeMounts) != 2 || c.VolumeMounts[1].MountPath != PlanDir {
				t.Errorf("mounts %+v", c.VolumeMounts)
			}
		}},
		{"no plan, no ConfigMap", nil, func(t *testing.T, objs *Objects) {
			if objs.ConfigMap != nil || argValue(container(t, objs.Job, "capture").Args, "--plan") != "" {
				t.Error("a ConfigMap or --plan without a plan")
			}
		}},
		{"start-at in UTC RFC 3339", func(o *Options) { o.StartAt = time.Date(2026, 12, 1, 10, 0, 0, 5e8, time.FixedZone("x", 3600)) }, func(t *testing.T, objs *Objects) {
			if got := argValue(container(t, objs.Job, "capture").Args, "--start-at"); got != "2026-12-01T09:00:00.5Z" {
				t.Errorf("--start-at %q", got)
			}
		}},
		{"required anti-affinity on hostname", func(o *Options) { o.AntiAffinity = AntiAffinityRequired }, func(t *testing.T, objs *Objects) {
			a := objs.Job.Spec.Template.Spec.Affinity
			if a == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Fatalf("affinity %+v", a)
			}
			term := a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
			if term.TopologyKey != corev1.LabelHostname || term.LabelSelector.MatchLabels[JobLabel] != "bench" ||
				objs.Job.Spec.Template.Labels[JobLabel] != "bench" {
				t.Errorf("term %+v labels %v", term, objs.Job.Spec.Template.Labels)
			}
		}},
		{"preferred anti-affinity", func(o *Options) { o.AntiAffinity = AntiAffinityPreferred }, func(t *testing.T, objs *Objects) {
			a := objs.Job.Spec.Template.Spec.Affinity
			if a == nil || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 || a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				t.Fatalf("affinity %+v", a)
			}
		}},
		{"no anti-affinity", nil, func(t *testing.T, objs *Objects) {
			if objs.Job.Spec.Template.Spec.Affinity != nil {
				t.Error("affinity without the option")
			}
		}},
		{"resource requests on capture", func(o *Options) { o.CPU, o.Memory = "1500m", "512Mi" }, func(t *testing.T, objs *Objects) {
			r := container(t, objs.Job, "capture").Resources.Requests
			if r.Cpu().String() != "1500m" || r.Memory().String() != "512Mi" {
				t.Errorf("requests %v", r)
			}
		}},
		{"plain http and registry secret reach push", func(o *Options) { o.PlainHTTP, o.RegistrySecret = true, "regcred" }, func(t *testing.T, objs *Objects) {
			p := container(t, objs.Job, "push")
			if p.Args[len(p.Args)-1] != "--plain-http" {
				t.Errorf("push args %q", p.Args)
			}
			if len(p.VolumeMounts) != 2 || p.VolumeMounts[1].MountPath != DockerDir || p.Env[2].Name != "DOCKER_CONFIG" {
				t.Errorf("push mounts %+v env %+v", p.VolumeMounts, p.Env)
			}
		}},
		{"api key from a secret", func(o *Options) { o.APIKeySecret = "k" }, func(t *testing.T, objs *Objects) {
			c := container(t, objs.Job, "capture")
			if argValue(c.Args, "--api-key-env") != APIKeyEnv || c.Env[2].ValueFrom.SecretKeyRef.Name != "k" || c.Env[2].ValueFrom.SecretKeyRef.Key != SecretKeyAPIKey {
				t.Errorf("capture args %q env %+v", c.Args, c.Env)
			}
		}},
		{"dollar signs are escaped from kubelet expansion", func(o *Options) {
			o.Model = "m$(JOB_COMPLETION_INDEX)"
			o.CaptureArgs = []string{"--title", "$HOME $$"}
		}, func(t *testing.T, objs *Objects) {
			args := container(t, objs.Job, "capture").Args
			if argValue(args, "--model") != "m$$(JOB_COMPLETION_INDEX)" || argValue(args, "--title") != "$$HOME $$$$" {
				t.Errorf("capture args %q", args)
			}
		}},
		{"restricted pod security", nil, func(t *testing.T, objs *Objects) {
			ps := objs.Job.Spec.Template.Spec.SecurityContext
			if !*ps.RunAsNonRoot || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod security %+v", ps)
			}
			for _, name := range []string{"capture", "pack", "push"} {
				sc := container(t, objs.Job, name).SecurityContext
				if *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || sc.Capabilities.Drop[0] != "ALL" {
					t.Errorf("%s security %+v", name, sc)
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := minimal()
			if c.modify != nil {
				c.modify(&o)
			}
			objs, err := Build(o)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, objs)
		})
	}
}

func TestBuildBadOptionsFail(t *testing.T) {
	for _, c := range []struct {
		name   string
		modify func(*Options)
		want   string
	}{
		{"no name", func(o *Options) { o.Name = "" }, "name"},
		{"uppercase name", func(o *Options) { o.Name = "Bench" }, `name "Bench"`},
		{"long name", func(o *Options) { o.Name = strings.Repeat("a", 53) }, "at most 52"},
		{"bad namespace", func(o *Options) { o.Namespace = "a_b" }, "namespace"},
		{"zero shards", func(o *Options) { o.Shards = 0 }, "shards 0"},
		{"too many shards", func(o *Options) { o.Shards = schema.MaxShards + 1 }, "shards 4097"},
		{"no image", func(o *Options) { o.Image = "" }, "image"},
		{"image with a space", func(o *Options) { o.Image = "a b" }, "image"},
		{"bad pull policy", func(o *Options) { o.PullPolicy = "Sometimes" }, "pull policy"},
		{"endpoint without scheme", func(o *Options) { o.Endpoint = "127.0.0.1:8000" }, "endpoint"},
		{"endpoint ftp", func(o *Options) { o.Endpoint = "ftp://h/" }, "endpoint"},
		{"no model", func(o *Options) { o.Model = "" }, "model"},
		{"empty plan", func(o *Options) { o.Plan = []byte(" \n") }, "plan: empty"},
		{"huge plan", func(o *Options) { o.Plan = bytes.Repeat([]byte("x"), MaxPlanSize+1) }, "ConfigMap limit"},
		{"no push", func(o *Options) { o.Push = "" }, "push"},
		{"push by digest", func(o *Options) { o.Push = "h/r@sha256:" + strings.Repeat("0", 64) }, "digest"},
		{"push without tag", func(o *Options) { o.Push = "h:5000/r" }, "host[:port]/repository:tag"},
		{"push with dollar", func(o *Options) { o.Push = "h/r$(X):v1" }, "lowercase"},
		{"push tag too long for shard suffix", func(o *Options) { o.Push = "h/r:" + strings.Repeat("t", 121) }, "valid OCI tag"},
		{"bad key secret", func(o *Options) { o.KeySecret = "" }, "signing key secret"},
		{"bad registry secret", func(o *Options) { o.RegistrySecret = "A" }, "registry secret"},
		{"bad anti-affinity", func(o *Options) { o.AntiAffinity = "sometimes" }, "anti-affinity"},
		{"reserved capture flag", func(o *Options) { o.CaptureArgs = []string{"--out=/tmp/x"} }, "--out is set by the Job"},
		{"reserved shard flag", func(o *Options) { o.CaptureArgs = []string{"--shard", "1/2"} }, "--shard is set by the Job"},
		{"bad cpu", func(o *Options) { o.CPU = "two" }, "cpu request"},
		{"negative memory", func(o *Options) { o.Memory = "-1Gi" }, "memory request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := minimal()
			c.modify(&o)
			_, err := Render(o)
			if err == nil || !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want ErrOptions containing %q", err, c.want)
			}
		})
	}
}

func TestShardRef(t *testing.T) {
	for _, c := range []struct {
		ref   string
		index int
		want  string
	}{
		{"127.0.0.1:5000/bench/run:v1", 0, "127.0.0.1:5000/bench/run:v1-shard-0"},
		{"registry.example/a/b/c:2026-11-30", 12, "registry.example/a/b/c:2026-11-30-shard-12"},
		{"localhost/run:v1", -1, ""},
		{"run:v1", 0, ""},
		{"h:5000/run", 0, ""},
		{"h/Run:v1", 0, ""},
		{"h/run:", 0, ""},
		{"h/run:.x", 0, ""},
	} {
		got, err := ShardRef(c.ref, c.index)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("ShardRef(%q, %d) = %q, %v; want %q", c.ref, c.index, got, err, c.want)
		}
	}
}
