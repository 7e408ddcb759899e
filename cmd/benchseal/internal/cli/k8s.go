package cli

import (
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/k8s"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

func newK8sCmd(io *IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s job",
		Short: "Render Kubernetes objects that run a sharded capture",
		Long: `k8s renders the Kubernetes side of a capture spread over many machines; it
never talks to a cluster (apply the output with kubectl).`,
	}
	cmd.AddCommand(newK8sJobCmd(io))
	return cmd
}

type k8sJobOptions struct {
	io          *IO
	opts        k8s.Options
	plan        string
	startAt     string
	pullPolicy  string
	out         string
	captureArgs []string
}

func newK8sJobCmd(io *IO) *cobra.Command {
	o := &k8sJobOptions{io: io}
	cmd := &cobra.Command{
		Use:   "job --shards N --image IMAGE --endpoint URL --model NAME --push REF [--plan FILE] [--start-at RFC3339] [flags] [-- CAPTURE-FLAGS...]",
		Short: "Write an Indexed Job whose pods capture, sign and push one shard each",
		Long: `job writes an Indexed Job (batch/v1, completionMode Indexed, completions =
parallelism = --shards) as YAML for 'kubectl apply -f'. The pod with completion
index I runs three steps of the same image, sharing an emptyDir:

  capture   benchseal capture --shards N (index I from JOB_COMPLETION_INDEX)
            --endpoint URL --model NAME [--plan] [--start-at] CAPTURE-FLAGS
  pack      benchseal pack --key: signed with the key in the Secret --key-secret
            (keys "key": the private key written by keygen, "password": its
            BENCHSEAL_PASSWORD)
  push      benchseal push to REF-shard-I (REF's tag followed by -shard-I), with
            the Docker config of the dockerconfigjson Secret --registry-secret,
            or anonymously

'benchseal merge --pull REF --shards N' then collects and verifies the shards.
A shard that fails is not retried (backoffLimitPerIndex 0): a second attempt
would load the server again at another time; merge finds it missing.

--plan FILE (a pre-registered plan or a load plan) is checked here and travels
in a ConfigMap NAME-plan rendered before the Job; a start time in the plan is
honoured by capture. Without a plan, give the load as capture flags after "--"
(e.g. -- --rate 800 --requests 20000); they are checked against capture's
flags, and those that cannot work in a pod are refused: local files
(--prompts, --manifest), --server-metrics and --reset-prefix-cache. --start-at makes every shard begin together; a shard that starts late
records by how much. --anti-affinity spreads shards one per node (required, or
preferred); --cpu and --memory are the capture container's requests. The pods
run as a non-root user with a read-only root filesystem and no service account
token. Values are escaped from Kubernetes' $(VAR) expansion.`,
		Example: `  benchseal k8s job --shards 4 --image registry.example/benchseal:v0.1.0 \
      --endpoint http://vllm.inference.svc:8000 --model meta-llama/Llama-3.1-8B-Instruct \
      --plan plan.json --start-at 2026-12-01T10:00:00Z --push registry.example/bench/run:v1 \
      --anti-affinity --cpu 2 --memory 1Gi --out job.yaml
  benchseal k8s job --shards 2 --image benchseal:dev --endpoint http://10.0.0.5:8000 --model m \
      --push 10.0.0.9:5000/bench/run:v1 --plain-http -- --rate 800 --requests 20000`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			if dash < 0 && len(args) > 0 || dash > 0 {
				return usagef("unexpected argument %q: capture flags go after \"--\"", args[0])
			}
			if dash == 0 {
				o.captureArgs = args
			}
			return runK8sJob(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.opts.Name, "name", "benchseal", "Job name (a DNS-1123 label; the plan ConfigMap is NAME-plan)")
	f.StringVar(&o.opts.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	f.IntVar(&o.opts.Shards, "shards", 0, "N: shards, completions and parallelism (required)")
	f.StringVar(&o.opts.Image, "image", "", "benchseal container image, built from the repository's Dockerfile (required)")
	enumFlag(f, &o.pullPolicy, "image-pull-policy", "", []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)},
		"Always, IfNotPresent or Never (default: Kubernetes')")
	f.StringVar(&o.opts.Endpoint, "endpoint", "", "server base URL as the pods reach it (required)")
	f.StringVar(&o.opts.Model, "model", "", "model name sent in every request (required)")
	f.StringVar(&o.plan, "plan", "", "capture plan file (pre-registered or load plan), carried in a ConfigMap")
	f.StringVar(&o.startAt, "start-at", "", "common start of every shard, RFC 3339 (e.g. 2026-12-01T10:00:00Z)")
	f.StringVar(&o.opts.Push, "push", "", "REF host[:port]/repository:tag; shard I is pushed to REF-shard-I (required)")
	f.BoolVar(&o.opts.PlainHTTP, "plain-http", false, "push over HTTP (test registries)")
	f.StringVar(&o.opts.KeySecret, "key-secret", "benchseal-signing-key", `Secret with the signing key ("key") and its password ("password")`)
	f.StringVar(&o.opts.RegistrySecret, "registry-secret", "", "kubernetes.io/dockerconfigjson Secret with the registry credentials (default: anonymous)")
	f.StringVar(&o.opts.APIKeySecret, "api-key-secret", "", `Secret whose "api-key" is the endpoint's API key`)
	enumFlag(f, &o.opts.AntiAffinity, "anti-affinity", k8s.AntiAffinityNone, []string{k8s.AntiAffinityRequired, k8s.AntiAffinityPreferred},
		"spread shards one per node: required or preferred (bare flag: required)")
	f.Lookup("anti-affinity").NoOptDefVal = k8s.AntiAffinityRequired
	f.StringVar(&o.opts.CPU, "cpu", "", "CPU request of the capture container (e.g. 2, 1500m)")
	f.StringVar(&o.opts.Memory, "memory", "", "memory request of the capture container (e.g. 1Gi)")
	f.StringVar(&o.out, "out", "", "file to write (replaced atomically; default: standard output)")
	for _, name := range []string{"shards", "image", "endpoint", "model", "push"} {
		cmd.MarkFlagRequired(name)
	}
	return cmd
}

func runK8sJob(o *k8sJobOptions) error {
	o.opts.PullPolicy = corev1.PullPolicy(o.pullPolicy)
	if o.out != "" {
		if err := refuseInputAsOut("--out", o.out, []string{o.plan}); err != nil {
			return err
		}
	}
	if o.startAt != "" {
		t, err := time.Parse(time.RFC3339, o.startAt)
		if err != nil {
			return usagef("--start-at %q: want RFC 3339, e.g. 2026-12-01T10:00:00Z", o.startAt)
		}
		o.opts.StartAt = t
	}
	load, err := checkCaptureArgs(o.io, o.captureArgs, o.plan != "")
	if err != nil {
		return err
	}
	o.opts.CaptureArgs = o.captureArgs
	if o.plan != "" {
		p, registered, err := readCapturePlan(o.plan)
		if err != nil {
			return err
		}
		load = p
		if registered != nil && registered.StartAt != "" {
			planned, _ := time.Parse(time.RFC3339Nano, registered.StartAt) // checked by plan.Decode
			if o.startAt != "" && !planned.Equal(o.opts.StartAt) {
				return usagef("--start-at %s: the pre-registered plan starts at %s", o.startAt, registered.StartAt)
			}
			o.opts.StartAt = time.Time{} // capture takes it from the plan
			o.startAt = registered.StartAt
		}
		b, err := readFileLimited("--plan", o.plan, plan.MaxSize, planWant)
		if err != nil {
			return err
		}
		o.opts.Plan = b
	}
	if o.startAt != "" {
		at, _ := time.Parse(time.RFC3339Nano, o.startAt) // parsed above, or checked by plan.Decode
		if err := capture.CheckStartAt(at, time.Now()); err != nil {
			from := "--start-at"
			if o.opts.StartAt.IsZero() {
				from = startSource("")
			}
			return usagef("%s: %v", from, err)
		}
	}
	if err := capture.CheckShardable(load, o.opts.Shards); err != nil { // the check sharded capture makes
		return usagef("--shards %d: %v", o.opts.Shards, err)
	}
	if o.startAt == "" && o.opts.Shards > 1 {
		fmt.Fprintln(o.io.ErrOut, "benchseal: warning: no --start-at: each shard starts when its pod does, not together")
	}
	b, err := k8s.Render(o.opts)
	if err != nil {
		return usagef("%v", err)
	}
	if o.out == "" {
		_, err = o.io.Out.Write(b)
		return err
	}
	if err := schema.WriteFileAtomic(o.out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(o.io.ErrOut, "wrote %s: Job %s, %d shards, pushed to %s-shard-0..%d\n", o.out, o.opts.Name, o.opts.Shards, o.opts.Push, o.opts.Shards-1)
	return nil
}

// checkCaptureArgs parses the capture flags given after "--" with
// capture's own flag set, so a typo fails here and not in N pods: unknown
// flags, positional arguments, flags the Job sets, load flags beside a
// plan, and no load at all are usage errors. It returns the load the flags
// describe (nil with --plan: the caller reads the plan file).
func checkCaptureArgs(io *IO, args []string, withPlan bool) (*capture.Plan, error) {
	for _, a := range args {
		if name, ok := k8s.ReservedCaptureFlag(a); ok {
			return nil, usagef("capture flag --%s after \"--\": the Job sets it (use the k8s job flag)", name)
		}
	}
	c, co := newCaptureCommand(io)
	fs := c.Flags()
	if err := fs.Parse(args); err != nil {
		return nil, usagef("capture flags after \"--\": %v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("capture flags after \"--\": unexpected argument %q", fs.Arg(0))
	}
	for _, name := range []string{"prompts", "manifest"} {
		if fs.Changed(name) {
			return nil, usagef("capture flag --%s after \"--\": it names a local file, which does not travel into the pods", name)
		}
	}
	if fs.Changed("server-metrics") && fs.Lookup("server-metrics").Value.String() != "off" {
		return nil, usagef("capture flag --server-metrics after \"--\": shards do not scrape (merge does not join scrapes); scrape the engine separately")
	}
	if fs.Changed("reset-prefix-cache") {
		return nil, usagef("capture flag --reset-prefix-cache after \"--\": each shard would empty the cache under the others' load")
	}
	load := false
	for _, name := range planFlags {
		if fs.Changed(name) {
			if withPlan {
				return nil, usagef("capture flag --%s after \"--\": --plan sets the load", name)
			}
			load = load || slices.Contains([]string{"concurrency", "rate", "preset"}, name)
		}
	}
	if !withPlan && !load {
		return nil, usagef("no load: give --plan, or capture's --concurrency, --rate or --preset after \"--\"")
	}
	if withPlan {
		return nil, nil // the plan file is read by the caller
	}
	return buildPlan(c, co)
}
