// preempt_test.go -- preemption through the extender: kube-scheduler's DefaultPreemption asks
// lotus (preemptVerb) which pods to evict; the pods lotus names are the ones deleted, and the
// preemptor lands on the nominated node.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ensurePriorityClasses creates the suite's PriorityClasses (once).
func ensurePriorityClasses(t testing.TB) {
	t.Helper()
	for name, v := range map[string]int32{"e2e-p5": 5, "e2e-p10": 10, "e2e-p1000": 1000} {
		_, err := cp.cs.SchedulingV1().PriorityClasses().Create(context.Background(),
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v},
			metav1.CreateOptions{})
		if err != nil && !isAlreadyExists(err) {
			t.Fatalf("PriorityClass %s: %v", name, err)
		}
	}
}

// runningPod creates a pod already bound to node (as if it had run there since started).
func runningPod(t testing.TB, s podSpec, started time.Time) {
	t.Helper()
	p := createPod(t, s)
	p.Status.StartTime = &metav1.Time{Time: started}
	p.Status.Phase = corev1.PodRunning
	if _, err := cp.cs.CoreV1().Pods(p.Namespace).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod %s status: %v", s.name, err)
	}
}

// waitBoundNudging waits for pod default/name to be bound. kube-scheduler retries a preemptor
// at once after deleting its victims; if lotus's watch has not delivered the deletion yet,
// lotus's filter still finds the node full, and kube-scheduler then parks the pod until the
// next cluster event (extenders give it no queueing hints; without an event, 5 minutes). A
// real cluster has events all the time; here, every 5 s without a binding, an annotation on
// node is changed, which is one.
func waitBoundNudging(t testing.TB, name, node string, timeout time.Duration) string {
	t.Helper()
	return pollBound(t, "default", name, timeout, 50*time.Millisecond, func() {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"lotus-e2e/nudge":"%d"}}}`, time.Now().UnixNano())
		if _, err := cp.cs.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType,
			[]byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("nudging node %s: %v", node, err)
		}
		t.Logf("pod %s still pending after 5 s: node %s annotated (a cluster event)", name, node)
	})
}

func exists(name string) bool {
	_, err := cp.cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// preemptCase fills node n1 with two running pods and sends a high-priority pod; with
// extender flags (nil: kube-scheduler alone, no extender) it returns which of the two was
// deleted, after checking that the preemptor landed on n1 and the other pod stayed.
func preemptCase(t *testing.T, pods [2]podSpec, started [2]time.Time, extFlags []string) string {
	t.Helper()
	ensurePriorityClasses(t)
	resetCluster(t)
	createNodes(t, nodeSpec{name: "n1", cpu: "4", mem: "8Gi"})
	for i := range pods {
		pods[i].nodeName, pods[i].cpu, pods[i].mem = "n1", "2", "1Gi"
		runningPod(t, pods[i], started[i])
	}
	o := schedOpts{}
	if extFlags != nil {
		o.extURL = startExtender(t, extFlags...).prefix
	}
	sched := startScheduler(t, o)
	createPod(t, podSpec{name: "urgent", scheduler: "lotus-scheduler", cpu: "2", mem: "1Gi", priorityClass: "e2e-p1000"})
	if got := waitBoundNudging(t, "urgent", "n1", 60*time.Second); got != "n1" {
		t.Fatalf("urgent bound to %q, want n1", got)
	}
	a, b := exists(pods[0].name), exists(pods[1].name)
	sched.stop(10 * time.Second)
	switch {
	case !a && b:
		return pods[0].name
	case a && !b:
		return pods[1].name
	}
	t.Fatalf("want exactly one victim; %s exists: %v, %s exists: %v", pods[0].name, a, pods[1].name, b)
	return ""
}

// One full node, two pods of equal priority. kube-scheduler alone evicts the most recently
// started one (it reprieves the more important, older pod first); lotus with --eviction=lrs
// names the least recently started, and that is the pod that goes.
func TestPreemptVictimsAreLotus(t *testing.T) {
	now := time.Now()
	pods := [2]podSpec{{name: "old", priorityClass: "e2e-p10"}, {name: "new", priorityClass: "e2e-p10"}}
	started := [2]time.Time{now.Add(-time.Hour), now.Add(-time.Minute)}
	if v := preemptCase(t, pods, started, nil); v != "new" {
		t.Fatalf("kube-scheduler alone evicted %s; the test assumes it evicts new", v)
	}
	if v := preemptCase(t, pods, started, []string{"--eviction=lrs"}); v != "old" {
		t.Fatalf("with lotus (--eviction=lrs) %s was evicted, want old", v)
	}
	if v := preemptCase(t, pods, started, []string{"--eviction=mrs"}); v != "new" {
		t.Fatalf("with lotus (--eviction=mrs) %s was evicted, want new", v)
	}
}

// A sticky pod (HYBRID, label lotus.io/sticky) is never a victim, even when it is the lowest
// priority pod on the node, the one kube-scheduler alone takes.
func TestPreemptNeverASticky(t *testing.T) {
	now := time.Now()
	pods := [2]podSpec{
		{name: "sticky", priorityClass: "e2e-p5", labels: map[string]string{"lotus.io/sticky": "true"}},
		{name: "plain", priorityClass: "e2e-p10"},
	}
	started := [2]time.Time{now.Add(-time.Minute), now.Add(-time.Hour)}
	if v := preemptCase(t, pods, started, nil); v != "sticky" {
		t.Fatalf("kube-scheduler alone evicted %s; the test assumes it evicts sticky", v)
	}
	if v := preemptCase(t, pods, started, []string{"--eviction=mrs"}); v != "plain" {
		t.Fatalf("with lotus %s was evicted, want plain", v)
	}
}
