package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ErrOptions is the root of every error about Options.
var ErrOptions = errors.New("invalid job options")

// MaxPlanSize bounds the plan carried in the ConfigMap: Kubernetes stores
// a ConfigMap in one etcd value of at most 1 MiB.
const MaxPlanSize = 1 << 20

// Anti-affinity modes: how the pods of one Job are spread over nodes.
const (
	// AntiAffinityNone places pods wherever the scheduler likes.
	AntiAffinityNone = ""
	// AntiAffinityRequired puts at most one shard on a node; shards that
	// find no free node stay Pending.
	AntiAffinityRequired = "required"
	// AntiAffinityPreferred spreads shards over nodes when it can.
	AntiAffinityPreferred = "preferred"
)

// Paths and names inside the pod.
const (
	// WorkDir is the emptyDir the three steps share: the run, the bundle
	// and the temporary files (the root filesystem is read-only).
	WorkDir = "/work"
	// PlanDir is where the ConfigMap's plan is mounted; the file is
	// PlanDir/PlanFile.
	PlanDir  = "/etc/benchseal/plan"
	PlanFile = "plan.json"
	// KeyDir is where the signing key Secret is mounted; the private key
	// is KeyDir/KeyFile (the Secret's key "key").
	KeyDir  = "/etc/benchseal/signing"
	KeyFile = "publisher.key"
	// DockerDir is DOCKER_CONFIG for push: the registry Secret's
	// .dockerconfigjson mounted as config.json.
	DockerDir = "/etc/benchseal/docker"
	// APIKeyEnv is the environment variable capture reads the endpoint's
	// API key from (the API key Secret's key "api-key").
	APIKeyEnv = "BENCHSEAL_API_KEY"
	// IndexEnv is the variable Kubernetes sets to a pod's completion index.
	IndexEnv = "JOB_COMPLETION_INDEX"
	// JobLabel labels every pod with the Job's name (anti-affinity selects
	// on it).
	JobLabel = "benchseal.dev/job"
	// ShardSuffix joins REF's tag and the shard index: REF-shard-I.
	ShardSuffix = "-shard-"
	// RunAsUser is the user and group the pods run as: distroless's
	// "nonroot", the USER of the repository's Dockerfile.
	RunAsUser = 65532
)

// Secret keys the renderer refers to.
const (
	SecretKeyPrivateKey = "key"
	SecretKeyPassword   = "password"
	SecretKeyAPIKey     = "api-key"
)

// ReservedCaptureFlags are the capture flags the Job sets itself; they may
// not appear in Options.CaptureArgs.
var ReservedCaptureFlags = []string{"out", "endpoint", "model", "shard", "shards", "start-at", "plan", "simulate",
	"api-key-env", "progress"}

// Options describe one sharded capture Job.
type Options struct {
	// Name is the Job's name (a DNS-1123 label of at most 52 characters,
	// leaving room for the pod names Kubernetes derives from it).
	Name string
	// Namespace is optional; empty leaves it to kubectl.
	Namespace string
	// Shards is N: completions = parallelism = N, indexes 0..N-1, at most
	// schema.MaxShards (Kubernetes allows more).
	Shards int
	// Image is the benchseal container image (the repository's
	// Dockerfile).
	Image string
	// PullPolicy is the image pull policy; empty leaves Kubernetes'
	// default.
	PullPolicy corev1.PullPolicy
	// Endpoint is the server's base URL (http or https).
	Endpoint string
	// Model is sent in every request.
	Model string
	// Plan is the content of the capture plan file (a pre-registered plan
	// or a load plan); nil: the load comes from CaptureArgs. It travels in
	// a ConfigMap named like the Job.
	Plan []byte
	// StartAt is the common start of every shard; zero: none (a plan's
	// own start time still applies).
	StartAt time.Time
	// CaptureArgs are further capture flags (load, workload, metadata),
	// passed verbatim after the ones the Job sets.
	CaptureArgs []string
	// Push is REF (host[:port]/repository:tag); shard I is pushed to
	// REF-shard-I.
	Push string
	// PlainHTTP pushes over HTTP (test registries).
	PlainHTTP bool
	// KeySecret names the Secret with the signing key ("key", as written
	// by benchseal keygen) and its password ("password").
	KeySecret string
	// RegistrySecret names a kubernetes.io/dockerconfigjson Secret with
	// the registry credentials; empty: anonymous push.
	RegistrySecret string
	// APIKeySecret names a Secret whose "api-key" is the endpoint's API
	// key; empty: none.
	APIKeySecret string
	// AntiAffinity is one of the AntiAffinity* modes.
	AntiAffinity string
	// CPU and Memory are the capture container's resource requests
	// (Kubernetes quantities such as "2" or "500m", "1Gi"); empty: none.
	CPU, Memory string
}

// Objects are what Render serialises: the ConfigMap (nil without a plan)
// and the Job.
type Objects struct {
	ConfigMap *corev1.ConfigMap
	Job       *batchv1.Job
}

// maxNameLen leaves room for "-<index>-<5 random>" in pod names within a
// 63-character label.
const maxNameLen = 52

// validate checks o and returns the parsed resource requests.
func (o *Options) validate() (corev1.ResourceList, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	o.validateTarget(bad)
	o.validatePod(bad)
	req := o.resourceRequests(bad)
	if len(errs) > 0 {
		return nil, errcond.Errorf(ErrOptions, "invalid job options: %w", errors.Join(errs...))
	}
	return req, nil
}

// validateTarget is validate's first phase, kept apart so validate stays
// within the size limit: the Job's names, shard count, image, endpoint,
// model, plan and push reference, each error reported through bad.
func (o *Options) validateTarget(bad func(format string, args ...any)) {
	if msgs := validation.IsDNS1123Label(o.Name); len(msgs) > 0 {
		bad("name %q: %s", o.Name, strings.Join(msgs, "; "))
	} else if len(o.Name) > maxNameLen {
		bad("name %q: at most %d characters", o.Name, maxNameLen)
	}
	if o.Namespace != "" {
		if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
			bad("namespace %q: %s", o.Namespace, strings.Join(msgs, "; "))
		}
	}
	if o.Shards < 1 || o.Shards > schema.MaxShards {
		bad("shards %d: must be in [1, %d]", o.Shards, schema.MaxShards)
	}
	if o.Image == "" || strings.ContainsAny(o.Image, " \t\r\n") {
		bad("image %q: a container image reference without spaces", o.Image)
	}
	switch o.PullPolicy {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		bad("image pull policy %q: Always, IfNotPresent or Never", o.PullPolicy)
	}
	if u, err := url.Parse(o.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("endpoint %q: an http:// or https:// URL", o.Endpoint)
	}
	if o.Model == "" {
		bad("model: required (sent in every request)")
	}
	if len(o.Plan) > MaxPlanSize {
		bad("plan: %d bytes, over the ConfigMap limit %d", len(o.Plan), MaxPlanSize)
	}
	if o.Plan != nil && len(bytes.TrimSpace(o.Plan)) == 0 {
		bad("plan: empty")
	}
	if _, err := ShardRef(o.Push, max(o.Shards-1, 0)); err != nil {
		bad("push: %v", err)
	}
}

// validatePod is validate's second phase, kept apart so validate stays
// within the size limit: the Secrets, anti-affinity mode and extra capture
// arguments the pod is built from, each error reported through bad.
func (o *Options) validatePod(bad func(format string, args ...any)) {
	if msgs := validation.IsDNS1123Subdomain(o.KeySecret); len(msgs) > 0 {
		bad("signing key secret %q: %s", o.KeySecret, strings.Join(msgs, "; "))
	}
	for _, s := range []struct{ what, name string }{{"registry secret", o.RegistrySecret}, {"API key secret", o.APIKeySecret}} {
		if s.name == "" {
			continue
		}
		if msgs := validation.IsDNS1123Subdomain(s.name); len(msgs) > 0 {
			bad("%s %q: %s", s.what, s.name, strings.Join(msgs, "; "))
		}
	}
	switch o.AntiAffinity {
	case AntiAffinityNone, AntiAffinityRequired, AntiAffinityPreferred:
	default:
		bad("anti-affinity %q: %s or %s", o.AntiAffinity, AntiAffinityRequired, AntiAffinityPreferred)
	}
	for _, a := range o.CaptureArgs {
		if f, ok := ReservedCaptureFlag(a); ok {
			bad("capture argument %q: --%s is set by the Job", a, f)
		}
	}
}

// resourceRequests is validate's last phase, kept apart so validate stays
// within the size limit: it parses CPU and Memory into the capture
// container's requests, reporting an unparsable or non-positive one
// through bad.
func (o *Options) resourceRequests(bad func(format string, args ...any)) corev1.ResourceList {
	req := corev1.ResourceList{}
	for _, r := range []struct {
		name corev1.ResourceName
		v    string
	}{{corev1.ResourceCPU, o.CPU}, {corev1.ResourceMemory, o.Memory}} {
		if r.v == "" {
			continue
		}
		q, err := resource.ParseQuantity(r.v)
		if err != nil || q.Sign() <= 0 {
			bad("%s request %q: a positive Kubernetes quantity (e.g. 2, 500m, 1Gi)", r.name, r.v)
			continue
		}
		req[r.name] = q
	}
	return req
}

// ReservedCaptureFlag reports whether arg sets one of
// ReservedCaptureFlags ("--out", "--out=x", "-out"), and which.
func ReservedCaptureFlag(arg string) (string, bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range ReservedCaptureFlags {
		if name == f {
			return f, true
		}
	}
	return "", false
}

// ShardRef returns the reference shard index is pushed to: REF's tag
// followed by "-shard-<index>". REF must be host[:port]/repository:tag
// (no digest), and the new tag must stay within the 128 characters OCI
// allows.
func ShardRef(ref string, index int) (string, error) {
	if index < 0 {
		return "", fmt.Errorf("shard index %d: negative", index)
	}
	if strings.Contains(ref, "@") {
		return "", fmt.Errorf("%q: a shard reference needs a tag, not a digest", ref)
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if slash <= 0 || colon < slash {
		return "", fmt.Errorf("%q: want host[:port]/repository:tag", ref)
	}
	tag := ref[colon+1:] + ShardSuffix + strconv.Itoa(index)
	if !tagPattern(tag) {
		return "", fmt.Errorf("%q: tag %q is not a valid OCI tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})", ref, tag)
	}
	for _, r := range ref[:colon] {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/:[]", r)) {
			return "", fmt.Errorf("%q: host and repository must be lowercase letters, digits and . _ - / : (%q)", ref, r)
		}
	}
	return ref[:colon+1] + tag, nil
}

// tagPattern reports whether t matches the OCI distribution tag grammar
// [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}.
func tagPattern(t string) bool {
	if len(t) == 0 || len(t) > 128 {
		return false
	}
	for i, r := range t {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
		if i > 0 {
			ok = ok || r == '.' || r == '-'
		}
		if !ok {
			return false
		}
	}
	return true
}

// escape protects a value from Kubernetes' $(VAR) expansion of command
// arguments: "$" becomes "$$", which the kubelet turns back into "$".
func escape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// Build returns the objects of a sharded capture Job.
func Build(o Options) (*Objects, error) {
	requests, err := o.validate()
	if err != nil {
		return nil, err
	}
	b := newJobBuilder(&o)
	captureC, cm := b.captureStep(requests)
	packC := b.packStep()
	pushC := b.pushStep()
	return &Objects{ConfigMap: cm, Job: b.job(captureC, packC, pushC)}, nil
}

// jobBuilder holds what Build's steps share: the options, the labels, the
// pod's volumes (each step adds its own, in step order) and the settings
// every container gets. Build is split by step so that each container's
// arguments, environment and mounts read in one place.
type jobBuilder struct {
	o         *Options
	labels    map[string]string
	volumes   []corev1.Volume
	indexEnv  corev1.EnvVar
	tmpEnv    corev1.EnvVar
	workMount corev1.VolumeMount
	security  *corev1.SecurityContext
	no, yes   bool
}

// runDir and bundleFile are the capture's run directory and the packed shard in
// the work directory, passed from step to step.
const (
	runDir     = WorkDir + "/run"
	bundleFile = WorkDir + "/shard.tar"
)

// newJobBuilder sets up the labels, the work volume and the settings every
// container of o's Job shares.
func newJobBuilder(o *Options) *jobBuilder {
	b := &jobBuilder{
		o:      o,
		labels: map[string]string{JobLabel: o.Name, "app.kubernetes.io/name": "benchseal"},
		indexEnv: corev1.EnvVar{Name: IndexEnv, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
			FieldPath: "metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']",
		}}},
		tmpEnv:    corev1.EnvVar{Name: "TMPDIR", Value: WorkDir},
		workMount: corev1.VolumeMount{Name: "work", MountPath: WorkDir},
		volumes:   []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		no:        false,
		yes:       true,
	}
	b.security = &corev1.SecurityContext{
		AllowPrivilegeEscalation: &b.no,
		ReadOnlyRootFilesystem:   &b.yes,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	return b
}

// container returns one step's container: the image, the shared
// environment, work mount and security settings, and args escaped
// against the kubelet's $(VAR) expansion.
func (b *jobBuilder) container(name string, args []string, env []corev1.EnvVar, mounts []corev1.VolumeMount) corev1.Container {
	escaped := make([]string, len(args))
	for i, a := range args {
		escaped[i] = escape(a)
	}
	return corev1.Container{
		Name:            name,
		Image:           b.o.Image,
		ImagePullPolicy: b.o.PullPolicy,
		Args:            escaped,
		Env:             append([]corev1.EnvVar{b.indexEnv, b.tmpEnv}, env...),
		VolumeMounts:    append([]corev1.VolumeMount{b.workMount}, mounts...),
		SecurityContext: b.security,
	}
}

// captureStep is step 1: capture shard $JOB_COMPLETION_INDEX of N, with
// the plan from its ConfigMap (returned, nil without a plan).
func (b *jobBuilder) captureStep(requests corev1.ResourceList) (corev1.Container, *corev1.ConfigMap) {
	o := b.o
	captureArgs := []string{"capture", "--endpoint", o.Endpoint, "--model", o.Model, "--out", runDir,
		"--shards", strconv.Itoa(o.Shards), "--progress", "never"}
	var captureEnv []corev1.EnvVar
	var captureMounts []corev1.VolumeMount
	var cm *corev1.ConfigMap
	if o.Plan != nil {
		cm = &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-plan", Namespace: o.Namespace, Labels: b.labels},
			Data:       map[string]string{PlanFile: string(o.Plan)},
			Immutable:  &b.yes,
		}
		b.volumes = append(b.volumes, corev1.Volume{Name: "plan", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
		}}})
		captureMounts = append(captureMounts, corev1.VolumeMount{Name: "plan", MountPath: PlanDir, ReadOnly: true})
		captureArgs = append(captureArgs, "--plan", PlanDir+"/"+PlanFile)
	}
	if !o.StartAt.IsZero() {
		captureArgs = append(captureArgs, "--start-at", o.StartAt.UTC().Format(time.RFC3339Nano))
	}
	if o.APIKeySecret != "" {
		captureArgs = append(captureArgs, "--api-key-env", APIKeyEnv)
		captureEnv = append(captureEnv, secretEnv(APIKeyEnv, o.APIKeySecret, SecretKeyAPIKey))
	}
	captureArgs = append(captureArgs, o.CaptureArgs...)
	captureC := b.container("capture", captureArgs, captureEnv, captureMounts)
	if len(requests) > 0 {
		captureC.Resources.Requests = requests
	}
	return captureC, cm
}

// packStep is step 2: pack and sign with the key from the Secret.
func (b *jobBuilder) packStep() corev1.Container {
	mode := int32(0o440) // owner root, group fsGroup: the nonroot user reads it through the group
	b.volumes = append(b.volumes, corev1.Volume{Name: "signing-key", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  b.o.KeySecret,
		Items:       []corev1.KeyToPath{{Key: SecretKeyPrivateKey, Path: KeyFile}},
		DefaultMode: &mode,
	}}})
	return b.container("pack", []string{"pack", runDir, "--out", bundleFile, "--key", KeyDir + "/" + KeyFile},
		[]corev1.EnvVar{secretEnv("BENCHSEAL_PASSWORD", b.o.KeySecret, SecretKeyPassword)},
		[]corev1.VolumeMount{{Name: "signing-key", MountPath: KeyDir, ReadOnly: true}})
}

// pushStep is step 3: push to REF-shard-$(JOB_COMPLETION_INDEX), expanded
// by the kubelet. REF was checked by ShardRef: it holds no "$", so nothing
// else in it can expand.
func (b *jobBuilder) pushStep() corev1.Container {
	o := b.o
	ref := o.Push + ShardSuffix + "$(" + IndexEnv + ")"
	var pushEnv []corev1.EnvVar
	var pushMounts []corev1.VolumeMount
	if o.RegistrySecret != "" {
		b.volumes = append(b.volumes, corev1.Volume{Name: "registry", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: o.RegistrySecret,
			Items:      []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
		}}})
		pushEnv = append(pushEnv, corev1.EnvVar{Name: "DOCKER_CONFIG", Value: DockerDir})
		pushMounts = append(pushMounts, corev1.VolumeMount{Name: "registry", MountPath: DockerDir, ReadOnly: true})
	} else {
		// No Docker config in the image: anonymous, and HOME points at
		// the work directory so nothing outside it is read.
		pushEnv = append(pushEnv, corev1.EnvVar{Name: "HOME", Value: WorkDir})
	}
	pushC := b.container("push", nil, pushEnv, pushMounts)
	pushC.Args = []string{"push", bundleFile, ref} // not escaped: the expansion is wanted
	if o.PlainHTTP {
		pushC.Args = append(pushC.Args, "--plain-http")
	}
	return pushC
}

// job is the last step: the indexed Job whose pod runs capture and pack
// as init containers and push as its container.
func (b *jobBuilder) job(captureC, packC, pushC corev1.Container) *batchv1.Job {
	o := b.o
	n := int32(o.Shards)
	uid := int64(RunAsUser)
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		InitContainers:               []corev1.Container{captureC, packC},
		Containers:                   []corev1.Container{pushC},
		Volumes:                      b.volumes,
		EnableServiceLinks:           &b.no,
		AutomountServiceAccountToken: &b.no,
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   &b.yes,
			RunAsUser:      &uid,
			RunAsGroup:     &uid,
			FSGroup:        &uid,
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Affinity: affinity(o.AntiAffinity, o.Name),
	}
	mode0, indexed := int32(0), batchv1.IndexedCompletion
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: b.labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &n,
			// A failed shard is not retried: a second attempt would load
			// the server again at another time. Its index fails, the
			// others finish and push, and merge finds the shard missing.
			BackoffLimitPerIndex: &mode0,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: b.labels},
				Spec:       spec,
			},
		},
	}
}

func secretEnv(name, secret, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
	}}}
}

// affinity returns the pod anti-affinity of mode: pods of one Job on
// distinct nodes (kubernetes.io/hostname), required or preferred.
func affinity(mode, name string) *corev1.Affinity {
	term := corev1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{JobLabel: name}},
		TopologyKey:   corev1.LabelHostname,
	}
	switch mode {
	case AntiAffinityRequired:
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term},
		}}
	case AntiAffinityPreferred:
		return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100, PodAffinityTerm: term}},
		}}
	}
	return nil
}

// Render returns the YAML of the objects of o: the plan ConfigMap (when
// there is a plan) and the Job, as "---"-separated documents ready for
// kubectl apply -f.
func Render(o Options) ([]byte, error) {
	objs, err := Build(o)
	if err != nil {
		return nil, err
	}
	return objs.Marshal()
}

// Marshal serialises the objects with sigs.k8s.io/yaml, ConfigMap first.
func (objs *Objects) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	if objs.ConfigMap != nil {
		b, err := yaml.Marshal(objs.ConfigMap)
		if err != nil {
			return nil, fmt.Errorf("marshal configmap: %w", err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	b, err := yaml.Marshal(objs.Job)
	if err != nil {
		return nil, fmt.Errorf("marshal job: %w", err)
	}
	buf.WriteString("---\n")
	buf.Write(b)
	return buf.Bytes(), nil
}
