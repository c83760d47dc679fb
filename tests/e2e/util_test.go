// util_test.go -- small shared pieces.
//
// SPDX-License-Identifier: MIT
package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var createOpts = metav1.CreateOptions{}

// ctxT is a context that ends with the test.
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// preferGold is a preferred node affinity (weight 100) for nodes labelled tier=gold.
func preferGold() *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 100,
			Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: "tier", Operator: corev1.NodeSelectorOpIn, Values: []string{"gold"},
			}}},
		}},
	}}
}
