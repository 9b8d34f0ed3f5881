// Package deploy holds no code: it is the home of the deployment files (Dockerfile, docker-compose stack,
// Kubernetes kustomizations, Prometheus rules, Grafana dashboard) and of the tests that check them against the
// binary: every environment variable they set is one ragproxy reads, every probe path is a route, selectors,
// volumes and mounts agree, the index is writable where it is written, and the alert rules pass promtool.
package deploy
