package loadtest

import (
	"fmt"
	"strings"
)

// deployment is a Kubernetes Deployment of about 2 KB, the size of a typical manifest: the workload's
// documents differ in name and replicas, so every write stores new content.
func deployment(name string, replicas int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  namespace: production
  labels:
    app.kubernetes.io/name: %[1]s
    app.kubernetes.io/part-of: storefront
    app.kubernetes.io/managed-by: hubd
spec:
  replicas: %[2]d
  selector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  template:
    metadata:
      labels:
        app.kubernetes.io/name: %[1]s
    spec:
      containers:
        - name: app
          image: registry.example.com/storefront/%[1]s:1.24.3
          ports:
            - containerPort: 8080
              name: http
          resources:
            requests:
              cpu: 250m
              memory: 256Mi
            limits:
              cpu: "1"
              memory: 512Mi
          readinessProbe:
            httpGet:
              path: /readyz
              port: http
            periodSeconds: 5
          livenessProbe:
            httpGet:
              path: /healthz
              port: http
            periodSeconds: 10
          env:
`, name, replicas)
	for i := 0; b.Len() < 2000; i++ {
		fmt.Fprintf(&b, "            - name: FEATURE_FLAG_%02d\n              value: \"enabled-for-%s-%d\"\n", i, name, i)
	}
	return []byte(b.String())
}
