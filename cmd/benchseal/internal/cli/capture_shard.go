package cli

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/capture"
)

// jobIndexEnv is the variable a Kubernetes Indexed Job sets in each pod.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// shardOptions reads --shard, --shards (with $JOB_COMPLETION_INDEX) and
// --start-at (or the pre-registered plan's start) into opts.
func shardOptions(cmd *cobra.Command, o *captureOptions, opts *capture.Options) error {
	switch {
	case o.shard != "":
		s, err := capture.ParseShard(o.shard)
		if err != nil {
			return usagef("--shard: %v", err)
		}
		opts.Shard = &s
	case cmd.Flags().Changed("shards"):
		v := o.io.Getenv(jobIndexEnv)
		if v == "" {
			return usagef("--shards %d: $%s is not set (give --shard I/N outside an Indexed Job)", o.shards, jobIndexEnv)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return usagef("--shards %d: $%s=%q is not an index", o.shards, jobIndexEnv, v)
		}
		s, err := capture.ParseShard(strconv.Itoa(i) + "/" + strconv.Itoa(o.shards))
		if err != nil {
			return usagef("--shards %d with $%s=%s: %v", o.shards, jobIndexEnv, v, err)
		}
		opts.Shard = &s
	}
	at := o.startAt
	if at == "" && o.registered != nil {
		at = o.registered.StartAt
	}
	if at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return usagef("--start-at %q: want an RFC 3339 time such as 2026-11-30T14:00:00Z", at)
		}
		if err := capture.CheckStartAt(t, time.Now()); err != nil {
			return usagef("%s: %v", startSource(o.startAt), err)
		}
		opts.StartAt = t
	}
	if opts.Shard != nil {
		// The shards' scrapes would each sit on their own timeline;
		// merge joins records only.
		if cmd.Flags().Changed("server-metrics") && o.serverMetrics != "off" {
			return usagef("--server-metrics with --shard/--shards: merge does not join server-metrics scrapes; scrape the engine separately")
		}
		opts.ServerMetrics = ""
	}
	return nil
}

// startSource names where a common start came from, for a message.
func startSource(flag string) string {
	if flag != "" {
		return "--start-at"
	}
	return "the pre-registered plan's start_at"
}
