package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/gateway"
)

// manifests are the objects of deploy/*.yaml, each decoded strictly (an unknown or
// misspelt field is an error) into its Kubernetes API type.
type manifests struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	secrets     map[string]*corev1.Secret
	pdbs        map[string]*policyv1.PodDisruptionBudget
}

func load(t *testing.T) *manifests {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no deploy/*.yaml")
	}
	m := &manifests{map[string]*appsv1.Deployment{}, map[string]*corev1.Service{}, map[string]*corev1.ConfigMap{},
		map[string]*corev1.Secret{}, map[string]*policyv1.PodDisruptionBudget{}}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			if err := m.add(doc); err != nil {
				t.Errorf("%s, document %d: %v", f, i+1, err)
			}
		}
	}
	return m
}

// add decodes one YAML document by its kind, strictly.
func (m *manifests) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	strict := func(into any) error { return yaml.UnmarshalStrict(doc, into) }
	switch fmt.Sprintf("%s %s", tm.APIVersion, tm.Kind) {
	case "apps/v1 Deployment":
		var o appsv1.Deployment
		if err := strict(&o); err != nil {
			return err
		}
		m.deployments[o.Name] = &o
	case "v1 Service":
		var o corev1.Service
		if err := strict(&o); err != nil {
			return err
		}
		m.services[o.Name] = &o
	case "v1 ConfigMap":
		var o corev1.ConfigMap
		if err := strict(&o); err != nil {
			return err
		}
		m.configMaps[o.Name] = &o
	case "v1 Secret":
		var o corev1.Secret
		if err := strict(&o); err != nil {
			return err
		}
		m.secrets[o.Name] = &o
	case "policy/v1 PodDisruptionBudget":
		var o policyv1.PodDisruptionBudget
		if err := strict(&o); err != nil {
			return err
		}
		m.pdbs[o.Name] = &o
	default:
		return fmt.Errorf("kind %s %s: not one this test knows; add it here to validate it", tm.APIVersion, tm.Kind)
	}
	return nil
}

// TestStrictDecoding_RejectsAnUnknownField: the decoding is strict, so a misspelt field
// fails the test rather than being dropped.
func TestStrictDecoding_RejectsAnUnknownField(t *testing.T) {
	m := &manifests{deployments: map[string]*appsv1.Deployment{}}
	err := m.add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n"))
	if err == nil || !strings.Contains(err.Error(), "replica") {
		t.Errorf("a Deployment with spec.replica: %v, want an unknown-field error naming it", err)
	}
}

// gatewayConfig loads the ConfigMap's gateway.yaml with config's own loader.
func gatewayConfig(t *testing.T, m *manifests) *config.Config {
	t.Helper()
	cm := m.configMaps["maskgate-config"]
	if cm == nil {
		t.Fatal("no ConfigMap maskgate-config")
	}
	src, ok := cm.Data["gateway.yaml"]
	if !ok {
		t.Fatal("ConfigMap maskgate-config has no gateway.yaml")
	}
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("the ConfigMap's gateway.yaml: %v", err)
	}
	return cfg
}

func gatewayPod(t *testing.T, m *manifests) (*appsv1.Deployment, *corev1.Container) {
	t.Helper()
	d := m.deployments["maskgate"]
	if d == nil {
		t.Fatal("no Deployment maskgate")
	}
	i := slices.IndexFunc(d.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "gateway" })
	if i < 0 {
		t.Fatal("Deployment maskgate has no container gateway")
	}
	return d, &d.Spec.Template.Spec.Containers[i]
}

// TestManifests_AGatewayBehindAServiceWithRedis: every object the deployment needs is
// there, and the Service, the PodDisruptionBudget and the Deployment's own selector all
// select the gateway's pods (Redis's its own).
func TestManifests_AGatewayBehindAServiceWithRedis(t *testing.T) {
	m := load(t)
	d, c := gatewayPod(t, m)
	podLabels := labels.Set(d.Spec.Template.Labels)
	for _, name := range []string{"maskgate", "maskgate-redis"} {
		if m.services[name] == nil {
			t.Errorf("no Service %s", name)
		}
	}
	if m.deployments["maskgate-redis"] == nil {
		t.Error("no Deployment maskgate-redis")
	}
	if m.secrets["maskgate-secrets"] == nil {
		t.Error("no Secret maskgate-secrets")
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("Deployment maskgate: replicas %v, want at least 2 (many instances sharing Redis)", d.Spec.Replicas)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || !sel.Matches(podLabels) {
		t.Errorf("Deployment maskgate's selector %v does not select its pods %v (%v)", d.Spec.Selector, podLabels, err)
	}
	if svc := m.services["maskgate"]; svc != nil {
		if !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
			t.Errorf("Service maskgate selects %v, not the gateway's pods %v", svc.Spec.Selector, podLabels)
		}
		for _, p := range svc.Spec.Ports {
			if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
				return cp.Name == p.TargetPort.String() || cp.ContainerPort == p.TargetPort.IntVal
			}) {
				t.Errorf("Service maskgate port %d targets %s, which the gateway container does not expose", p.Port, p.TargetPort.String())
			}
		}
	}
	pdb := m.pdbs["maskgate"]
	if pdb == nil {
		t.Fatal("no PodDisruptionBudget maskgate")
	}
	psel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || !psel.Matches(podLabels) {
		t.Errorf("PodDisruptionBudget maskgate selects %v, not the gateway's pods %v (%v)", pdb.Spec.Selector, podLabels, err)
	}
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || pdb.Spec.MinAvailable.IntValue() >= int(*d.Spec.Replicas) {
		t.Errorf("PodDisruptionBudget maskgate: minAvailable %v with %d replicas: want at least 1 and fewer than the replicas, so a drain can proceed", pdb.Spec.MinAvailable, *d.Spec.Replicas)
	}
}

// TestManifests_TheConfigLoadsAndTheSecretFillsItsVariables: the ConfigMap's gateway
// config passes config's validation; every variable it names (keys, thread salt, admin
// key, Redis password) comes from the Secret the pod takes its environment from; the
// Secret commits no value; and Redis's URL names the Redis Service.
func TestManifests_TheConfigLoadsAndTheSecretFillsItsVariables(t *testing.T) {
	m := load(t)
	cfg := gatewayConfig(t, m)
	_, c := gatewayPod(t, m)
	var secretName string
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil {
			secretName = e.SecretRef.Name
		}
	}
	secret := m.secrets[secretName]
	if secret == nil {
		t.Fatalf("the gateway container takes its environment from Secret %q, which deploy/ does not hold", secretName)
	}
	want := []string{cfg.ThreadSaltEnv, cfg.AdminKeyEnv, cfg.State.Redis.PasswordEnv}
	for _, k := range cfg.Keys {
		want = append(want, k.KeyEnv)
	}
	for _, b := range cfg.Backends {
		want = append(want, b.APIKeyEnv)
	}
	if cfg.ThreadSaltEnv == "" {
		t.Error("the config has no thread_salt_env: replicas would name one conversation differently")
	}
	for _, name := range want {
		if name == "" {
			continue
		}
		if _, ok := secret.StringData[name]; !ok {
			t.Errorf("the config reads %s, which Secret %s does not hold", name, secretName)
		}
	}
	for k, v := range secret.StringData {
		if v != "" {
			t.Errorf("Secret %s commits a value for %s; fill it from the cluster instead", secretName, k)
		}
	}
	if len(secret.Data) > 0 {
		t.Errorf("Secret %s commits data", secretName)
	}
	if u := cfg.State.Redis.URL; !strings.Contains(u, "//maskgate-redis:") {
		t.Errorf("state.redis.url %q does not name the Service maskgate-redis", u)
	}
}

// TestManifests_ProbesAndGraceMatchTheGateway: the probes ask the gateway's own health
// endpoints (a gateway answers them: /healthz 200, /readyz 503 with no backend up), on
// the port the image listens on; and the pod's termination grace covers the config's
// shutdown_grace with 5 to 30 s to spare, so requests in flight finish before SIGKILL.
func TestManifests_ProbesAndGraceMatchTheGateway(t *testing.T) {
	m := load(t)
	cfg := gatewayConfig(t, m)
	d, c := gatewayPod(t, m)
	if c.Command != nil {
		t.Fatalf("the gateway container sets command %q: it replaces the image's ENTRYPOINT, whose -listen this test reads", c.Command)
	}
	listen := imagePort(t, filepath.Join("..", "Dockerfile"))
	gw := httptest.NewServer(gateway.New(gateway.Options{}))
	defer gw.Close()
	for _, p := range []struct {
		name  string
		probe *corev1.Probe
		path  string
		codes []int // what a gateway with no backend up answers
	}{
		{"readinessProbe", c.ReadinessProbe, "/readyz", []int{http.StatusOK, http.StatusServiceUnavailable}},
		{"livenessProbe", c.LivenessProbe, "/healthz", []int{http.StatusOK}},
	} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: want an httpGet probe", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s asks %s, want %s", p.name, p.probe.HTTPGet.Path, p.path)
		}
		port := p.probe.HTTPGet.Port
		if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
			return cp.ContainerPort == listen && (cp.Name == port.String() || cp.ContainerPort == port.IntVal)
		}) {
			t.Errorf("%s: port %s is not the container's %d, where the image listens", p.name, port.String(), listen)
		}
		resp, err := http.Get(gw.URL + p.probe.HTTPGet.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !slices.Contains(p.codes, resp.StatusCode) {
			t.Errorf("%s: a gateway answers GET %s with %d, want one of %v", p.name, p.probe.HTTPGet.Path, resp.StatusCode, p.codes)
		}
	}
	grace := time.Duration(cfg.Server.ShutdownGrace)
	tgps := d.Spec.Template.Spec.TerminationGracePeriodSeconds
	if tgps == nil {
		t.Fatal("Deployment maskgate sets no terminationGracePeriodSeconds (Kubernetes' 30 s would then have to cover shutdown_grace)")
	}
	if pod := time.Duration(*tgps) * time.Second; pod < grace+5*time.Second || pod > grace+30*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v for shutdown_grace %v: want 5 to 30 s more, so streams end and the process exits before SIGKILL", pod, grace)
	}
}

// imagePort is the port the image built by dockerfile listens on: the port of -listen in
// its ENTRYPOINT or CMD (exec form), which its EXPOSE must name and its HEALTHCHECK ask.
func imagePort(t *testing.T, dockerfile string) int32 {
	t.Helper()
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(b), "\\\n", " ") // join continued lines
	var listen, health string
	exposed := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "EXPOSE":
			for _, p := range f[1:] {
				exposed[strings.TrimSuffix(p, "/tcp")] = true
			}
		case "ENTRYPOINT", "CMD", "HEALTHCHECK":
			_, form, ok := strings.Cut(line, "[")
			if !ok {
				continue
			}
			var args []string
			if err := json.Unmarshal([]byte("["+form), &args); err != nil {
				t.Fatalf("%s: %s: %v", dockerfile, f[0], err)
			}
			for i, a := range args {
				switch {
				case (a == "-listen" || a == "--listen") && i+1 < len(args):
					listen = args[i+1]
				case strings.HasPrefix(a, "-listen="), strings.HasPrefix(a, "--listen="):
					_, listen, _ = strings.Cut(a, "=")
				case a == "-healthcheck" && i+1 < len(args):
					health = args[i+1]
				}
			}
		}
	}
	if listen == "" {
		t.Fatalf("%s: no -listen in its ENTRYPOINT or CMD", dockerfile)
	}
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("%s: -listen %q: %v", dockerfile, listen, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("%s: -listen %q: %v", dockerfile, listen, err)
	}
	if !exposed[port] {
		t.Errorf("%s listens on %s but does not EXPOSE %s", dockerfile, listen, port)
	}
	if u, err := url.Parse(health); err != nil || u.Port() != port {
		t.Errorf("%s: HEALTHCHECK asks %q, not the port it listens on (%s)", dockerfile, health, port)
	}
	return int32(n)
}
