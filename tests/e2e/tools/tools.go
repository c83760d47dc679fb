//go:build tools

// Package tools pins the Kubernetes commands the suite builds from this module:
// go build k8s.io/kubernetes/cmd/kube-apiserver and cmd/kube-scheduler.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
