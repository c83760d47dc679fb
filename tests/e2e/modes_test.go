// modes_test.go -- bind through the extender (bindVerb) in slot mode with HYBRID's sticky
// pool, and LoTES tables mode, on the real kube-scheduler.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Slot mode (capacity, SC level 1: 16 slots per core) on a 1-core node: 16 pods fit, the 17th
// fails with lotus's "no free slot" in its event; with --sticky-slots 3 the first 3 pods bound
// through lotus's bind carry lotus.io/sticky=true, the others do not. The sticky label needs
// patch on pods, which docs/extender.md says to add to the shipped ClusterRole: the test adds
// exactly that.
func TestSlotModeStickyBind(t *testing.T) {
	if err := applyManifests(context.Background(), cp.admin, writeStickyRBAC(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = cp.cs.RbacV1().ClusterRoleBindings().Delete(ctx, "lotus-extender-sticky", metav1.DeleteOptions{})
		_ = cp.cs.RbacV1().ClusterRoles().Delete(ctx, "lotus-extender-sticky", metav1.DeleteOptions{})
	})
	resetCluster(t)
	createNodes(t, nodeSpec{name: "one-core", cpu: "1", mem: "64Gi"})
	ext := startExtender(t, "--slots=capacity", "--slots-level=1", "--slots-cpu-unit=1", "--sticky-slots=3")
	startScheduler(t, schedOpts{extURL: ext.prefix})
	for i := 0; i < 16; i++ {
		name := fmt.Sprintf("s%02d", i)
		createPod(t, podSpec{name: name, scheduler: "lotus-scheduler", cpu: "10m", mem: "16Mi"})
		if got := waitBound(t, "default", name, 60*time.Second); got != "one-core" {
			t.Fatalf("%s bound to %q", name, got)
		}
	}
	createPod(t, podSpec{name: "s16", scheduler: "lotus-scheduler", cpu: "10m", mem: "16Mi"})
	waitEvent(t, "default", "s16", "FailedScheduling", 60*time.Second, "no free slot (16/16 used)")
	sticky := 0
	for i := 0; i < 16; i++ {
		p, err := cp.cs.CoreV1().Pods("default").Get(context.Background(), fmt.Sprintf("s%02d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Labels["lotus.io/sticky"] == "true" {
			sticky++
			if i >= 3 {
				t.Errorf("pod %s (the %dth bound) is sticky; the pool has 3", p.Name, i+1)
			}
		}
	}
	if sticky != 3 {
		t.Fatalf("%d sticky pods, want 3", sticky)
	}
}

// writeStickyRBAC writes the ClusterRole addition docs/extender.md gives for --sticky-slots.
func writeStickyRBAC(t testing.TB) string {
	t.Helper()
	path := filepath.Join(cp.dir, "sticky-rbac.json")
	const s = `{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
  "metadata": {"name": "lotus-extender-sticky"},
  "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["patch"]}]},
 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
  "metadata": {"name": "lotus-extender-sticky"},
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "lotus-extender-sticky"},
  "subjects": [{"kind": "ServiceAccount", "name": "lotus-extender", "namespace": "lotus-system"}]}]}`
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// LoTES mode: tables from `lotus-sim lotes tables` for cpu-rich (a1, a2: 4 cores, 1Gi) and
// mem-rich (b1, b2: 1 core, 4Gi) nodes and classes x (1000m, 256Mi) and y (250m, 1Gi). The
// tables send x to the cpu-rich bin and y to the mem-rich one; bestfit1 alone does the
// opposite (lotus-sim place says so, checked first). kube-scheduler's score plugins are off.
func TestLoTESTablesMode(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "cluster.json")
	classes := filepath.Join(dir, "classes.json")
	tables := filepath.Join(dir, "tables.json")
	tasks := filepath.Join(dir, "tasks.json")
	files := map[string]string{
		cluster: `{"machines": [
 {"name": "a1", "capacity": {"cpu": 4000, "mem": 1073741824, "disk": 107374182400}},
 {"name": "a2", "capacity": {"cpu": 4000, "mem": 1073741824, "disk": 107374182400}},
 {"name": "b1", "capacity": {"cpu": 1000, "mem": 4294967296, "disk": 107374182400}},
 {"name": "b2", "capacity": {"cpu": 1000, "mem": 4294967296, "disk": 107374182400}}]}`,
		classes: `{"classes": [{"name": "x", "alpha": 0.5, "mu": 1, "cpu": 1000, "mem": 268435456},
 {"name": "y", "alpha": 0.5, "mu": 1, "cpu": 250, "mem": 1073741824}]}`,
		tasks: `[{"id": 1, "request": {"cpu": 1000, "mem": 268435456, "disk": 0}},
 {"id": 2, "request": {"cpu": 250, "mem": 1073741824, "disk": 0}}]`,
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sim := filepath.Join(cp.lotusBin, "lotus-sim")
	if out, err := exec.Command(sim, "lotes", "tables", "--cluster", cluster, "--classes", classes,
		"--out", tables).CombinedOutput(); err != nil {
		t.Fatalf("lotus-sim lotes tables: %v\n%s", err, out)
	}
	if got := simPlace(t, "bestfit1", cluster, tasks); got[0] != "b1" || got[1] != "a1" {
		t.Fatalf("bestfit1 alone places x, y on %v; the test assumes b1, a1", got)
	}
	resetCluster(t)
	createNodes(t,
		nodeSpec{name: "a1", cpu: "4", mem: "1Gi", disk: "100Gi"}, nodeSpec{name: "a2", cpu: "4", mem: "1Gi", disk: "100Gi"},
		nodeSpec{name: "b1", cpu: "1", mem: "4Gi", disk: "100Gi"}, nodeSpec{name: "b2", cpu: "1", mem: "4Gi", disk: "100Gi"})
	ext := startExtender(t, "--policy=bestfit1", "--lotes-tables="+tables)
	startScheduler(t, schedOpts{
		extURL: ext.prefix,
		plugins: map[string]interface{}{"score": map[string]interface{}{
			"disabled": []interface{}{map[string]interface{}{"name": "*"}},
		}},
	})
	createPod(t, podSpec{name: "x", scheduler: "lotus-scheduler", cpu: "1000m", mem: "256Mi"})
	if got := waitBound(t, "default", "x", 60*time.Second); got != "a1" {
		t.Fatalf("x bound to %q, want a1 (its class's cpu-rich bin)", got)
	}
	createPod(t, podSpec{name: "y", scheduler: "lotus-scheduler", cpu: "250m", mem: "1Gi"})
	if got := waitBound(t, "default", "y", 60*time.Second); got != "b1" {
		t.Fatalf("y bound to %q, want b1 (its class's mem-rich bin)", got)
	}
}
