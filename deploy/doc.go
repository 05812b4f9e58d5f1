// Package deploy holds the Kubernetes manifests of a maskgate deployment (the YAML files
// beside this one: the gateway's Deployment, Service, ConfigMap, Secret and
// PodDisruptionBudget, and a Redis for the shared state) and, in its tests, their
// validation: each decoded strictly into the Kubernetes API types, the ConfigMap's
// gateway config loaded by config's own loader, the probes pointed at the gateway's
// health endpoints, and the pod's termination grace matched to the config's shutdown
// grace. It has no code of its own; only its test links the Kubernetes API modules, so
// the gateway binary never does.
package deploy
