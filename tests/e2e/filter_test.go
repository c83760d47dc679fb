// filter_test.go -- filter and prioritize through the real kube-scheduler.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"fmt"
	"testing"
	"time"
)

// Without kube-scheduler's own resource fit, lotus's filter alone decides where a pod fits,
// in both nodeCacheCapable modes (node names, or whole Node objects in the request); the
// reasons lotus gives for the nodes it rejects appear in the pod's FailedScheduling event.
func TestFilter(t *testing.T) {
	for _, cacheCapable := range []bool{true, false} {
		t.Run(fmt.Sprintf("nodeCacheCapable=%v", cacheCapable), func(t *testing.T) {
			resetCluster(t)
			createNodes(t, nodeSpec{name: "small", cpu: "2", mem: "4Gi"},
				nodeSpec{name: "large", cpu: "4", mem: "8Gi"})
			ext := startExtender(t, "--policy=bestfit1")
			startScheduler(t, schedOpts{
				extURL:  ext.prefix,
				ext:     map[string]interface{}{"nodeCacheCapable": cacheCapable},
				plugins: map[string]interface{}{"multiPoint": map[string]interface{}{"disabled": []interface{}{map[string]interface{}{"name": "NodeResourcesFit"}}}},
			})
			// 1 cpu fits both: bestfit1 takes the small node (least left over).
			createPod(t, podSpec{name: "fits-both", scheduler: "lotus-scheduler", cpu: "1", mem: "1Gi"})
			if got := waitBound(t, "default", "fits-both", 60*time.Second); got != "small" {
				t.Fatalf("fits-both bound to %q, want small (bestfit1)", got)
			}
			// 3 cpu now fits only the large node (the small one has 1 cpu left), although
			// bestfit1 prefers small nodes: the filter decided.
			createPod(t, podSpec{name: "fits-large", scheduler: "lotus-scheduler", cpu: "3", mem: "1Gi"})
			if got := waitBound(t, "default", "fits-large", 60*time.Second); got != "large" {
				t.Fatalf("fits-large bound to %q, want large", got)
			}
			// 6 cpu fits nowhere: lotus's reasons for both nodes are in the event.
			createPod(t, podSpec{name: "too-big", scheduler: "lotus-scheduler", cpu: "6", mem: "1Gi"})
			msg := waitEvent(t, "default", "too-big", "FailedScheduling", 60*time.Second,
				"0/2 nodes are available",
				"Insufficient cpu: requested 6000m, capacity 2000m",
				"Insufficient cpu: requested 6000m, capacity 4000m")
			// A pod that fits once the other pods are counted: 2 cpu fit neither node now
			// (1 cpu left on each), and lotus says how much is free.
			createPod(t, podSpec{name: "no-room", scheduler: "lotus-scheduler", cpu: "2", mem: "1Gi"})
			waitEvent(t, "default", "no-room", "FailedScheduling", 60*time.Second,
				"Insufficient cpu: requested 2000m, free 1000m")
			t.Logf("FailedScheduling: %s", msg)
		})
	}
}

// lotus's prioritize is added to kube-scheduler's own score plugins at the configured weight:
// extender score (0..10) x 10 x weight, against a plugin's (0..100) x its weight.
func TestPrioritizeWeight(t *testing.T) {
	cases := []struct {
		affinityWeight int
		extWeight      int
		want           string
	}{
		// NodeAffinity gives "big" 100, lotus (bestfit1) gives "little" 10 -> 100 x weight.
		{affinityWeight: 1, extWeight: 2, want: "little"}, // 100 vs 200
		{affinityWeight: 3, extWeight: 2, want: "big"},    // 300 vs 200
		{affinityWeight: 5, extWeight: 6, want: "little"}, // 500 vs 600
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("affinity=%d,extender=%d", c.affinityWeight, c.extWeight), func(t *testing.T) {
			resetCluster(t)
			createNodes(t, nodeSpec{name: "big", cpu: "8", mem: "16Gi", labels: map[string]string{"tier": "gold"}},
				nodeSpec{name: "little", cpu: "2", mem: "4Gi"})
			ext := startExtender(t, "--policy=bestfit1")
			startScheduler(t, schedOpts{
				extURL: ext.prefix,
				ext:    map[string]interface{}{"weight": c.extWeight},
				plugins: map[string]interface{}{"score": map[string]interface{}{
					"disabled": []interface{}{map[string]interface{}{"name": "*"}},
					"enabled":  []interface{}{map[string]interface{}{"name": "NodeAffinity", "weight": c.affinityWeight}},
				}},
			})
			pod := makePod(podSpec{name: "p", scheduler: "lotus-scheduler", cpu: "1", mem: "1Gi"})
			pod.Spec.Affinity = preferGold()
			if _, err := cp.cs.CoreV1().Pods("default").Create(ctxT(t), pod, createOpts); err != nil {
				t.Fatal(err)
			}
			if got := waitBound(t, "default", "p", 60*time.Second); got != c.want {
				t.Fatalf("bound to %q, want %q", got, c.want)
			}
		})
	}
}
