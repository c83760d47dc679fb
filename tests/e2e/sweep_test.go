// sweep_test.go -- manifests/sweep/ (a T(x) sweep as a Kubernetes Indexed Job, then a merge
// Job; docs/simulator.md "Sweeps on a cluster") applied server-side to the real API server,
// with the real Job controller (k8s.io/kubernetes/pkg/controller/job) started in this
// process, since the control plane runs no kube-controller-manager. It checks that the
// controller creates one pod per completion index 0..N-1, N being both the Job's completions
// and the N of the container's `--shard $(JOB_COMPLETION_INDEX)/N`, that each pod carries its
// index and the JOB_COMPLETION_INDEX variable the argument expands, and that the merge Job's
// pod is created. No kubelet runs, so the pods stay Pending: running lotus-sim itself is
// tests/integration/simulator/test_shard_cli.sh's part.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/kubernetes/pkg/controller/job"
)

const sweepNS = "lotus-system"

// shardCount returns N of the "--shard $(JOB_COMPLETION_INDEX)/N" argument.
func shardCount(t *testing.T, args []string) int {
	t.Helper()
	for i, a := range args {
		if a == "--shard" && i+1 < len(args) {
			idx, n, ok := strings.Cut(args[i+1], "/")
			if !ok || idx != "$(JOB_COMPLETION_INDEX)" {
				t.Fatalf("--shard %q: want $(JOB_COMPLETION_INDEX)/N", args[i+1])
			}
			v, err := strconv.Atoi(n)
			if err != nil {
				t.Fatalf("--shard %q: %v", args[i+1], err)
			}
			return v
		}
	}
	t.Fatalf("no --shard in %q", args)
	return 0
}

func TestSweepIndexedJob(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	files, err := filepath.Glob(filepath.Join("..", "..", "manifests", "sweep", "*.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("manifests/sweep: %v %v", files, err)
	}
	sort.Strings(files)
	if err := applyManifests(ctx, cp.admin, files...); err != nil {
		t.Fatal(err)
	}
	jobs := cp.cs.BatchV1().Jobs(sweepNS)
	defer func() {
		bg := metav1.DeletePropagationBackground
		for _, name := range []string{"lotus-sweep-shards", "lotus-sweep-merge"} {
			_ = jobs.Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &bg})
		}
		_ = cp.cs.CoreV1().Pods(sweepNS).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=lotus-sweep"})
		_ = cp.cs.CoreV1().PersistentVolumeClaims(sweepNS).Delete(context.Background(), "lotus-sweep", metav1.DeleteOptions{})
	}()

	shards, err := jobs.Get(ctx, "lotus-sweep-shards", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if shards.Spec.CompletionMode == nil || *shards.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed", shards.Spec.CompletionMode)
	}
	n := shardCount(t, shards.Spec.Template.Spec.Containers[0].Args)
	if shards.Spec.Completions == nil || int(*shards.Spec.Completions) != n {
		t.Fatalf("completions %v, but --shard .../%d", shards.Spec.Completions, n)
	}

	factory := informers.NewSharedInformerFactory(cp.cs, 0)
	jc, err := job.NewController(ctx, cp.cs, factory.Core().V1().Pods(), factory.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	go jc.Run(ctx, 2)

	var pods []corev1.Pod
	deadline := time.Now().Add(60 * time.Second)
	for {
		l, err := cp.cs.CoreV1().Pods(sweepNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=lotus-sweep"})
		if err != nil {
			t.Fatal(err)
		}
		pods = l.Items
		if len(pods) >= n+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	seen := map[int]string{}
	merges := 0
	for _, p := range pods {
		switch p.Labels["app.kubernetes.io/component"] {
		case "merge":
			merges++
			continue
		case "shard":
		default:
			t.Errorf("pod %s: unexpected component label", p.Name)
			continue
		}
		s := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= n {
			t.Errorf("pod %s: completion index %q, want 0..%d", p.Name, s, n-1)
			continue
		}
		if other, dup := seen[i]; dup {
			t.Errorf("index %d on two pods: %s and %s", i, other, p.Name)
		}
		seen[i] = p.Name
		env := false
		for _, e := range p.Spec.Containers[0].Env {
			env = env || (e.Name == "JOB_COMPLETION_INDEX" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil)
		}
		if !env {
			t.Errorf("pod %s: no JOB_COMPLETION_INDEX from a field reference", p.Name)
		}
		if got := shardCount(t, p.Spec.Containers[0].Args); got != n {
			t.Errorf("pod %s: --shard .../%d, want %d", p.Name, got, n)
		}
	}
	if len(seen) != n {
		t.Errorf("%d shard pods with distinct indexes, want %d (%d pods listed)", len(seen), n, len(pods))
	}
	if merges != 1 {
		t.Errorf("%d merge pods, want 1", merges)
	}
	t.Logf("%d shard pods, indexes %v; %d merge pod", len(seen), seen, merges)
}
