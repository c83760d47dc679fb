// kube_test.go -- API helpers: server-side apply of manifests/, nodes as API objects (no
// kubelet, as scheduler_perf and KWOK do), pods, waiting for placements and events.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// readManifest returns the objects of one manifests/ file (a single object or a v1 List).
func readManifest(path string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var top map[string]interface{}
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	u := &unstructured.Unstructured{Object: top}
	if u.GetKind() != "List" {
		return []*unstructured.Unstructured{u}, nil
	}
	items, _ := top["items"].([]interface{})
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, it := range items {
		m, ok := it.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("%s: items[%d] is not an object", path, i)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

// applyManifests applies every object of the files server-side (field manager lotus-e2e),
// in order, as `kubectl apply --server-side -f` does: not a dry run.
func applyManifests(ctx context.Context, cfg *rest.Config, paths ...string) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, path := range paths {
		objs, err := readManifest(path)
		if err != nil {
			return err
		}
		for _, o := range objs {
			gvk := o.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return fmt.Errorf("%s: %s %s: %w", path, gvk, o.GetName(), err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
			if m.Scope.Name() == meta.RESTScopeNameNamespace {
				ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
			}
			data, err := json.Marshal(o.Object)
			if err != nil {
				return err
			}
			force := true
			if _, err := ri.Patch(ctx, o.GetName(), "application/apply-patch+yaml", data,
				metav1.PatchOptions{FieldManager: "lotus-e2e", Force: &force}); err != nil {
				return fmt.Errorf("%s: apply %s %s/%s: %w", path, gvk.Kind, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}

type nodeSpec struct {
	name   string
	cpu    string // millicores, e.g. "4000m" or "4"
	mem    string // bytes quantity, e.g. "8Gi"
	pods   string // allocatable pods (default 110)
	disk   string // ephemeral-storage ("" = none)
	labels map[string]string
}

func makeNode(s nodeSpec) *corev1.Node {
	pods := s.pods
	if pods == "" {
		pods = "110"
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(s.cpu),
		corev1.ResourceMemory: resource.MustParse(s.mem),
		corev1.ResourcePods:   resource.MustParse(pods),
	}
	if s.disk != "" {
		rl[corev1.ResourceEphemeralStorage] = resource.MustParse(s.disk)
	}
	labels := map[string]string{"kubernetes.io/hostname": s.name, "lotus-e2e": "1"}
	for k, v := range s.labels {
		labels[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    rl,
			Allocatable: rl.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
				Reason: "KubeletReady", Message: "lotus e2e: an API object, no kubelet",
			}},
			Phase: corev1.NodeRunning,
		},
	}
}

type podSpec struct {
	name, ns      string
	scheduler     string
	cpu, mem      string // requests; "" = none
	priority      *int32
	priorityClass string
	labels        map[string]string
	nodeName      string // pre-bound (a running pod), bypassing the scheduler
}

func makePod(s podSpec) *corev1.Pod {
	req := corev1.ResourceList{}
	if s.cpu != "" {
		req[corev1.ResourceCPU] = resource.MustParse(s.cpu)
	}
	if s.mem != "" {
		req[corev1.ResourceMemory] = resource.MustParse(s.mem)
	}
	ns := s.ns
	if ns == "" {
		ns = "default"
	}
	zero := int64(0)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, Labels: s.labels},
		Spec: corev1.PodSpec{
			SchedulerName: s.scheduler,
			NodeName:      s.nodeName,
			// No kubelet confirms a deletion: a zero grace period lets a preempted pod go.
			TerminationGracePeriodSeconds: &zero,
			PriorityClassName:             s.priorityClass,
			Priority:                      s.priority,
			Containers: []corev1.Container{{
				Name: "c", Image: "registry.invalid/none:0",
				Resources: corev1.ResourceRequirements{Requests: req},
			}},
		},
	}
	return p
}

// resetCluster deletes every node and every pod of the default namespace, and waits until the
// API server lists none.
func resetCluster(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	cs := cp.cs
	zero := int64(0)
	if err := cs.CoreV1().Pods("default").DeleteCollection(ctx,
		metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Fatalf("deleting pods: %v", err)
	}
	if err := cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("deleting nodes: %v", err)
	}
	if err := cs.CoreV1().Events("default").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("deleting events: %v", err)
	}
	waitFor(t, 60*time.Second, "an empty cluster", func() (bool, string) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0,
			fmt.Sprintf("%d pods, %d nodes left", len(pods.Items), len(nodes.Items))
	})
}

func createNodes(t testing.TB, specs ...nodeSpec) {
	t.Helper()
	for _, s := range specs {
		if _, err := cp.cs.CoreV1().Nodes().Create(context.Background(), makeNode(s), metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating node %s: %v", s.name, err)
		}
	}
}

func createPod(t testing.TB, s podSpec) *corev1.Pod {
	t.Helper()
	p, err := cp.cs.CoreV1().Pods(makePod(s).Namespace).Create(context.Background(), makePod(s), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", s.name, err)
	}
	return p
}

// waitFor polls cond every 50 ms until it holds; fails the test after timeout with cond's
// last explanation.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var why string
	for {
		var ok bool
		ok, why = cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s: %s", timeout, what, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitBound waits until pod ns/name has spec.nodeName and returns it.
func waitBound(t testing.TB, ns, name string, timeout time.Duration) string {
	t.Helper()
	return pollBound(t, ns, name, timeout, 50*time.Millisecond, nil)
}

// pollBound polls pod ns/name every `every` until it is bound and returns its node; every 5 s
// without a binding it calls stalled, if not nil. Fails the test after timeout with the pod's
// events.
func pollBound(t testing.TB, ns, name string, timeout, every time.Duration, stalled func()) string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	stall := time.Now().Add(5 * time.Second)
	for {
		p, err := cp.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Spec.NodeName != "" {
			return p.Spec.NodeName
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s/%s not bound after %s; events: %q", ns, name, timeout, podEvents(ns, name, ""))
		}
		if stalled != nil && time.Now().After(stall) {
			stalled()
			stall = time.Now().Add(5 * time.Second)
		}
		time.Sleep(every)
	}
}

// podEvents returns the messages of the events about pod ns/name (reason "" = any).
func podEvents(ns, name, reason string) []string {
	sel := fields.Set{"involvedObject.name": name, "involvedObject.kind": "Pod"}
	if reason != "" {
		sel["reason"] = reason
	}
	evs, err := cp.cs.CoreV1().Events(ns).List(context.Background(),
		metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return []string{"(listing events: " + err.Error() + ")"}
	}
	sort.Slice(evs.Items, func(i, j int) bool {
		return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp)
	})
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

// waitEvent waits for an event of the given reason about the pod whose message contains every
// one of want, and returns the message.
func waitEvent(t testing.TB, ns, name, reason string, timeout time.Duration, want ...string) string {
	t.Helper()
	var got string
	waitFor(t, timeout, fmt.Sprintf("a %s event on %s/%s containing %q", reason, ns, name, want),
		func() (bool, string) {
			msgs := podEvents(ns, name, reason)
		next:
			for _, m := range msgs {
				for _, w := range want {
					if !strings.Contains(m, w) {
						continue next
					}
				}
				got = m
				return true, ""
			}
			return false, fmt.Sprintf("events: %q", msgs)
		})
	return got
}

func isNotFound(err error) bool      { return apierrors.IsNotFound(err) }
func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
