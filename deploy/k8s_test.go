package deploy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// The Kubernetes objects' fields the checks read.
type (
	meta struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	}
	object struct {
		Kind     string            `yaml:"kind"`
		Metadata meta              `yaml:"metadata"`
		Data     map[string]string `yaml:"data"`
		Spec     objectSpec        `yaml:"spec"`
	}
	objectSpec struct {
		Replicas    *int           `yaml:"replicas"`
		Selector    map[string]any `yaml:"selector"`
		Template    *podTemplate   `yaml:"template"`
		JobTemplate *struct {
			Spec struct {
				Template podTemplate `yaml:"template"`
			} `yaml:"spec"`
		} `yaml:"jobTemplate"`
		ScaleTargetRef *struct {
			Kind string `yaml:"kind"`
			Name string `yaml:"name"`
		} `yaml:"scaleTargetRef"`
		VolumeClaimTemplates []struct {
			Metadata meta `yaml:"metadata"`
		} `yaml:"volumeClaimTemplates"`
		AccessModes []string `yaml:"accessModes"`
		Ports       []struct {
			TargetPort any `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	podTemplate struct {
		Metadata meta    `yaml:"metadata"`
		Spec     podSpec `yaml:"spec"`
	}
	podSpec struct {
		Affinity *struct {
			PodAffinity *struct {
				Required []struct {
					TopologyKey   string `yaml:"topologyKey"`
					LabelSelector struct {
						MatchLabels map[string]string `yaml:"matchLabels"`
					} `yaml:"labelSelector"`
				} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
			} `yaml:"podAffinity"`
		} `yaml:"affinity"`
		InitContainers []container `yaml:"initContainers"`
		Containers     []container `yaml:"containers"`
		Volumes        []struct {
			Name                  string `yaml:"name"`
			PersistentVolumeClaim *struct {
				ClaimName string `yaml:"claimName"`
				ReadOnly  bool   `yaml:"readOnly"`
			} `yaml:"persistentVolumeClaim"`
		} `yaml:"volumes"`
	}
	container struct {
		Name    string   `yaml:"name"`
		Image   string   `yaml:"image"`
		Command []string `yaml:"command"`
		Args    []string `yaml:"args"`
		Env     []struct {
			Name      string `yaml:"name"`
			Value     string `yaml:"value"`
			ValueFrom *struct {
				SecretKeyRef *struct {
					Name     string `yaml:"name"`
					Key      string `yaml:"key"`
					Optional bool   `yaml:"optional"`
				} `yaml:"secretKeyRef"`
			} `yaml:"valueFrom"`
		} `yaml:"env"`
		EnvFrom []struct {
			ConfigMapRef *struct {
				Name string `yaml:"name"`
			} `yaml:"configMapRef"`
		} `yaml:"envFrom"`
		Ports []struct {
			Name string `yaml:"name"`
		} `yaml:"ports"`
		StartupProbe   *probe `yaml:"startupProbe"`
		LivenessProbe  *probe `yaml:"livenessProbe"`
		ReadinessProbe *probe `yaml:"readinessProbe"`
		VolumeMounts   []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
			ReadOnly  bool   `yaml:"readOnly"`
		} `yaml:"volumeMounts"`
	}
	probe struct {
		HTTPGet *struct {
			Path string `yaml:"path"`
			Port any    `yaml:"port"`
		} `yaml:"httpGet"`
	}
)

// workload is a pod template with the object that holds it.
type workload struct {
	obj *object
	pod *podTemplate
}

func (w workload) String() string { return w.obj.Kind + "/" + w.obj.Metadata.Name }

// render builds a kustomization directory with kustomize's own API, as `kubectl apply -k` does, and decodes
// its objects.
func render(t *testing.T, dir string) []*object {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	rm, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out, err := rm.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	var objs []*object
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		o := &object{}
		if err := dec.Decode(o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		objs = append(objs, o)
	}
	return objs
}

func workloads(objs []*object) []workload {
	var out []workload
	for _, o := range objs {
		switch {
		case o.Spec.Template != nil:
			out = append(out, workload{o, o.Spec.Template})
		case o.Spec.JobTemplate != nil:
			out = append(out, workload{o, &o.Spec.JobTemplate.Spec.Template})
		}
	}
	return out
}

func find(objs []*object, kind, name string) *object {
	for _, o := range objs {
		if o.Kind == kind && o.Metadata.Name == name {
			return o
		}
	}
	return nil
}

// matchLabels returns a selector's labels: a Service's selector is the labels, a workload's has matchLabels.
func matchLabels(sel map[string]any) map[string]string {
	if ml, ok := sel["matchLabels"].(map[string]any); ok {
		sel = ml
	}
	out := map[string]string{}
	for k, v := range sel {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

func selects(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// isRagproxy tells ragproxy's containers from the backends'.
func isRagproxy(c container) bool { return strings.Contains(c.Image, "ragproxy/ragproxy") }

// routeStatus answers GET path on a gateway built as serve builds it, without an index.
func routeStatus(t *testing.T, path string) int {
	t.Helper()
	client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{Name: "primary", BaseURL: "http://127.0.0.1:1/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.New(server.Config{Metrics: http.NotFoundHandler()}, client).Serve(ctx, ln) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// secretKeys are the keys of the Secret the operator creates from base/secret.example.yaml.
func secretKeys(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("k8s/base/secret.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		StringData map[string]string `yaml:"stringData"`
	}
	if err := yaml.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for k := range s.StringData {
		keys[k] = true
	}
	return keys
}

var envRef = regexp.MustCompile(`\$\(([A-Z0-9_]+)\)`)

// TestKustomizations renders each kustomization and checks it as an operator would find out the hard way.
func TestKustomizations(t *testing.T) {
	be := readBinaryEnv(t)
	keys := secretKeys(t)
	for _, dir := range []string{"k8s/base", "k8s/overlays/full", "k8s/overlays/shared-volume"} {
		t.Run(dir, func(t *testing.T) {
			objs := render(t, dir)
			checkObjects(t, dir, objs, be, keys)
		})
	}
}

func checkObjects(t *testing.T, dir string, objs []*object, be binaryEnv, keys map[string]bool) {
	if find(objs, "Namespace", "ragproxy") == nil {
		t.Error("no Namespace ragproxy")
	}
	for _, o := range objs {
		if o.Kind != "Namespace" && o.Metadata.Namespace != "ragproxy" {
			t.Errorf("%s/%s: namespace %q, want ragproxy", o.Kind, o.Metadata.Name, o.Metadata.Namespace)
		}
	}
	cm := find(objs, "ConfigMap", "ragproxy")
	if cm == nil {
		t.Fatal("no ConfigMap ragproxy")
	}
	indexPath := cm.Data["RAGPROXY_INDEX"]
	wls := workloads(objs)

	for _, w := range wls {
		spec := w.pod.Spec
		if w.obj.Kind == "Deployment" || w.obj.Kind == "StatefulSet" {
			if sel := matchLabels(w.obj.Spec.Selector); !selects(sel, w.pod.Metadata.Labels) {
				t.Errorf("%s: selector %v does not match its pods' labels %v", w, sel, w.pod.Metadata.Labels)
			}
		}
		// Volumes match mounts.
		volumes := map[string]bool{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = true
			if pvc := v.PersistentVolumeClaim; pvc != nil && find(objs, "PersistentVolumeClaim", pvc.ClaimName) == nil {
				t.Errorf("%s: volume %s claims %s, which no PersistentVolumeClaim is", w, v.Name, pvc.ClaimName)
			}
		}
		for _, vct := range w.obj.Spec.VolumeClaimTemplates {
			volumes[vct.Metadata.Name] = true
		}
		mounted := map[string]bool{}
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			for _, m := range c.VolumeMounts {
				mounted[m.Name] = true
				if !volumes[m.Name] {
					t.Errorf("%s: container %s mounts %s, which is no volume of the pod", w, c.Name, m.Name)
				}
			}
		}
		for v := range volumes {
			if !mounted[v] {
				t.Errorf("%s: volume %s is mounted by no container", w, v)
			}
		}
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			checkContainer(t, w, c, objs, be, keys, indexPath)
		}
	}

	// A ReadWriteOnce index attaches to one node: every pod mounting it must be scheduled there.
	if pvc := find(objs, "PersistentVolumeClaim", "ragproxy-index"); pvc != nil && slices.Contains(pvc.Spec.AccessModes, "ReadWriteOnce") {
		for _, w := range wls {
			if !mountsClaim(w.pod, "ragproxy-index") {
				continue
			}
			ok := false
			if a := w.pod.Spec.Affinity; a != nil && a.PodAffinity != nil {
				for _, term := range a.PodAffinity.Required {
					ok = ok || term.TopologyKey == "kubernetes.io/hostname" && selects(term.LabelSelector.MatchLabels, w.pod.Metadata.Labels)
				}
			}
			if !ok {
				t.Errorf("%s mounts the ReadWriteOnce index without the podAffinity that puts it on the node of the others", w)
			}
		}
	}

	for _, o := range objs {
		switch o.Kind {
		case "Service":
			sel := matchLabels(o.Spec.Selector)
			var ports []string
			hit := false
			for _, w := range wls {
				if selects(sel, w.pod.Metadata.Labels) {
					hit = true
					for _, c := range w.pod.Spec.Containers {
						for _, p := range c.Ports {
							ports = append(ports, p.Name)
						}
					}
				}
			}
			if !hit {
				t.Errorf("Service %s: selector %v matches no pods", o.Metadata.Name, sel)
			}
			for _, p := range o.Spec.Ports {
				if name, ok := p.TargetPort.(string); ok && !slices.Contains(ports, name) {
					t.Errorf("Service %s: targetPort %s is no port of the pods it selects (%v)", o.Metadata.Name, name, ports)
				}
			}
		case "PodDisruptionBudget":
			sel := matchLabels(o.Spec.Selector)
			if !slices.ContainsFunc(wls, func(w workload) bool { return selects(sel, w.pod.Metadata.Labels) }) {
				t.Errorf("PodDisruptionBudget %s: selector %v matches no pods", o.Metadata.Name, sel)
			}
		case "HorizontalPodAutoscaler":
			ref := o.Spec.ScaleTargetRef
			target := find(objs, ref.Kind, ref.Name)
			switch {
			case target == nil:
				t.Errorf("HorizontalPodAutoscaler %s scales %s/%s, which does not exist", o.Metadata.Name, ref.Kind, ref.Name)
			case target.Spec.Replicas != nil:
				t.Errorf("%s/%s sets replicas: %d beside its HorizontalPodAutoscaler: each apply resets the count", ref.Kind, ref.Name, *target.Spec.Replicas)
			}
		}
	}

	if dir == "k8s/base" {
		// Without the neo4j and qdrant components, their secrets must not be required.
		for _, w := range wls {
			for _, c := range w.pod.Spec.Containers {
				for _, e := range c.Env {
					if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && (e.Name == "NEO4J_PASSWORD" || e.Name == "QDRANT_API_KEY") && !e.ValueFrom.SecretKeyRef.Optional {
						t.Errorf("%s: %s requires the Secret key %s although no backend needs it", w, c.Name, e.Name)
					}
				}
			}
		}
	}
}

func mountsClaim(pod *podTemplate, claim string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

// checkContainer checks one of ragproxy's containers: the variables it gets are read, its probes are routes,
// its Secret keys exist, its image is versioned, and the index is writable when it writes the index.
func checkContainer(t *testing.T, w workload, c container, objs []*object, be binaryEnv, keys map[string]bool, indexPath string) {
	t.Helper()
	where := w.String() + " container " + c.Name
	if !isRagproxy(c) {
		return
	}
	if tag := c.Image[strings.LastIndex(c.Image, ":")+1:]; !strings.Contains(c.Image, ":") || tag == "latest" {
		t.Errorf("%s: image %q, want a versioned tag", where, c.Image)
	}
	// Variables referenced as $(NAME) feed the container's own arguments or other variables.
	referenced := map[string]bool{}
	for _, s := range append(slices.Clone(c.Args), c.Command...) {
		for _, m := range envRef.FindAllStringSubmatch(s, -1) {
			referenced[m[1]] = true
		}
	}
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
		for _, m := range envRef.FindAllStringSubmatch(e.Value, -1) {
			referenced[m[1]] = true
		}
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			if ref.Name != "ragproxy" || !keys[ref.Key] {
				t.Errorf("%s: %s from Secret %s key %s, which secret.example.yaml does not define", where, e.Name, ref.Name, ref.Key)
			}
		}
	}
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		cm := find(objs, "ConfigMap", ef.ConfigMapRef.Name)
		if cm == nil {
			t.Errorf("%s: envFrom ConfigMap %s, which does not exist", where, ef.ConfigMapRef.Name)
			continue
		}
		for k := range cm.Data {
			env[k] = true
		}
	}
	for name := range env {
		if !be.vars[name] && !runtimeEnv[name] && !referenced[name] {
			t.Errorf("%s: sets %s, which ragproxy does not read", where, name)
		}
	}
	ports := map[string]bool{}
	for _, p := range c.Ports {
		ports[p.Name] = true
	}
	for kind, p := range map[string]*probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			continue
		}
		if st := routeStatus(t, p.HTTPGet.Path); st == http.StatusNotFound {
			t.Errorf("%s: %s probe asks %s, which is no route", where, kind, p.HTTPGet.Path)
		}
		if name, ok := p.HTTPGet.Port.(string); ok && !ports[name] {
			t.Errorf("%s: %s probe's port %s is no port of the container", where, kind, name)
		}
	}
	serves := len(c.Args) > 0 && c.Args[0] == "serve"
	if serves && (c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz") {
		t.Errorf("%s: serves without a readiness probe on /readyz", where)
	}
	// Whoever writes the index (the admin API, ingest) needs it writable: a read-only mount answers edits with
	// 500 (permission denied).
	if writes := env["RAGPROXY_ADMIN_KEYS"] || len(c.Args) > 0 && c.Args[0] == "ingest"; writes {
		found := false
		for _, m := range c.VolumeMounts {
			if m.MountPath != indexPath {
				continue
			}
			found = true
			if m.ReadOnly {
				t.Errorf("%s: writes the index but mounts %s read-only", where, indexPath)
			}
			for _, v := range w.pod.Spec.Volumes {
				if v.Name == m.Name && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly {
					t.Errorf("%s: writes the index but its claim %s is read-only", where, v.PersistentVolumeClaim.ClaimName)
				}
			}
		}
		if !found {
			t.Errorf("%s: writes the index but mounts nothing at RAGPROXY_INDEX %s", where, indexPath)
		}
	}
}
