// manifests_test.go -- every object of manifests/ applied to the real API server
// (server-side apply, not a dry run), and SubjectAccessReviews showing that the extender's and
// the second scheduler's ServiceAccounts can do what they need and nothing more of what is
// checked.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestManifestsApplyServerSide(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "manifests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	sort.Strings(files)
	if err := applyManifests(context.Background(), cp.admin, files...); err != nil {
		t.Fatal(err)
	}
	// Applying again changes nothing and fails nothing (idempotent, as kubectl apply is).
	if err := applyManifests(context.Background(), cp.admin, files...); err != nil {
		t.Fatalf("second apply: %v", err)
	}
	for _, f := range files {
		objs, err := readManifest(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d objects applied", filepath.Base(f), len(objs))
	}
}

type access struct {
	verb, group, resource, sub, ns, name string
	want                                 bool
}

func (a access) String() string {
	r := a.resource
	if a.sub != "" {
		r += "/" + a.sub
	}
	if a.group != "" {
		r += "." + a.group
	}
	where := "cluster-wide"
	if a.ns != "" {
		where = "in " + a.ns
	}
	if a.name != "" {
		r += " " + a.name
	}
	return fmt.Sprintf("%s %s %s", a.verb, r, where)
}

func checkAccess(t *testing.T, user string, cases []access) {
	t.Helper()
	for _, c := range cases {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   user,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:lotus-system", "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: c.verb, Group: c.group, Resource: c.resource, Subresource: c.sub,
				Namespace: c.ns, Name: c.name,
			},
		}}
		got, err := cp.cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview: %v", err)
		}
		if got.Status.Allowed != c.want {
			t.Errorf("%s: can %s: %v, want %v (%s)", user, c, got.Status.Allowed, c.want, got.Status.Reason)
		}
	}
}

// The extender lists and watches nodes and pods everywhere and creates bindings; it cannot
// read secrets, change or delete pods (patch only with the documented --sticky-slots
// addition, not applied here), or touch nodes.
func TestManifestsRBACExtender(t *testing.T) {
	if err := applyManifests(context.Background(), cp.admin, manifestPath("10-extender-rbac.json")); err != nil {
		t.Fatal(err)
	}
	checkAccess(t, "system:serviceaccount:lotus-system:lotus-extender", []access{
		{verb: "list", resource: "nodes", want: true},
		{verb: "watch", resource: "nodes", want: true},
		{verb: "list", resource: "pods", want: true},
		{verb: "watch", resource: "pods", want: true},
		{verb: "create", resource: "pods", sub: "binding", ns: "default", want: true},
		{verb: "get", resource: "nodes", name: "n1", want: false},
		{verb: "get", resource: "secrets", ns: "lotus-system", want: false},
		{verb: "list", resource: "secrets", want: false},
		{verb: "patch", resource: "pods", ns: "default", want: false},
		{verb: "delete", resource: "pods", ns: "default", want: false},
		{verb: "create", resource: "pods", ns: "default", want: false},
		{verb: "create", resource: "pods", sub: "eviction", ns: "default", want: false},
		{verb: "update", resource: "nodes", want: false},
		{verb: "create", resource: "serviceaccounts", sub: "token", ns: "lotus-system", want: false},
	})
}

// The second scheduler has kube-scheduler's own roles (system:kube-scheduler,
// system:volume-scheduler) and its one lease; it cannot read secrets or take another lease.
func TestManifestsRBACScheduler(t *testing.T) {
	if err := applyManifests(context.Background(), cp.admin, manifestPath("30-scheduler-rbac.json")); err != nil {
		t.Fatal(err)
	}
	checkAccess(t, "system:serviceaccount:lotus-system:lotus-scheduler", []access{
		{verb: "create", resource: "pods", sub: "binding", ns: "default", want: true},
		{verb: "delete", resource: "pods", ns: "default", want: true}, // preemption
		{verb: "patch", resource: "pods", sub: "status", ns: "default", want: true},
		{verb: "list", resource: "nodes", want: true},
		{verb: "create", group: "events.k8s.io", resource: "events", ns: "default", want: true},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", ns: "lotus-system", want: true},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: "lotus-system", name: "lotus-scheduler", want: true},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: "lotus-system", name: "other", want: false},
		{verb: "get", resource: "configmaps", ns: "kube-system", name: "extension-apiserver-authentication", want: true},
		{verb: "get", resource: "secrets", ns: "lotus-system", want: false},
		{verb: "update", resource: "nodes", want: false},
	})
}
