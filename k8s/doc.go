// Package k8s renders the Kubernetes objects that run a sharded capture
// from many machines: an Indexed Job (k8s.io/api batch/v1) whose pod for
// completion index I captures shard I of N, packs and signs it, and pushes
// the bundle to REF-shard-I; and, when a plan file travels with it, the
// ConfigMap that carries the plan. It only builds and serialises objects:
// it never talks to a cluster. It imports only schema (the shard limit).
package k8s
