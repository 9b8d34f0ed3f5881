package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCompose checks docker-compose.yml: every service has a healthcheck, every dependency waits for a
// condition, ragproxy's environment is read by ragproxy, and every secret it needs is required, not defaulted
// to empty.
func TestCompose(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Services map[string]struct {
			Environment map[string]string     `yaml:"environment"`
			Healthcheck *struct{ Test []any } `yaml:"healthcheck"`
			DependsOn   map[string]struct {
				Condition string `yaml:"condition"`
			} `yaml:"depends_on"`
			Ports []string `yaml:"ports"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("docker-compose.yml: %v (depends_on must be the long form, with conditions)", err)
	}
	be := readBinaryEnv(t)
	for name, s := range doc.Services {
		if s.Healthcheck == nil || len(s.Healthcheck.Test) == 0 {
			t.Errorf("service %s has no healthcheck", name)
		}
		for dep, d := range s.DependsOn {
			if _, ok := doc.Services[dep]; !ok {
				t.Errorf("service %s depends on %s, which is no service", name, dep)
			}
			if d.Condition == "" {
				t.Errorf("service %s depends on %s without a condition", name, dep)
			}
		}
		for _, p := range s.Ports {
			if strings.Count(p, ":") < 2 && name != "ragproxy" && name != "open-webui" {
				t.Errorf("service %s publishes %s on every address; publish it on 127.0.0.1", name, p)
			}
		}
	}
	rp, ok := doc.Services["ragproxy"]
	if !ok {
		t.Fatal("no ragproxy service")
	}
	for name := range rp.Environment {
		if !be.vars[name] && !runtimeEnv[name] {
			t.Errorf("ragproxy's environment sets %s, which ragproxy does not read", name)
		}
	}
	// ${VAR:-} leaves a secret empty: Qdrant then runs without a key on its port.
	for _, name := range []string{"QDRANT_API_KEY", "NEO4J_PASSWORD", "RAGPROXY_API_KEYS"} {
		if v := rp.Environment[name]; !strings.HasPrefix(v, "${"+name+":?") {
			t.Errorf("ragproxy's %s is %q, want it required (${%s:?...})", name, v, name)
		}
	}
	if v := doc.Services["qdrant"].Environment["QDRANT__SERVICE__API_KEY"]; !strings.HasPrefix(v, "${QDRANT_API_KEY:?") {
		t.Errorf("qdrant's API key is %q, want QDRANT_API_KEY required", v)
	}
	// Open WebUI sends one bearer key; the list of client keys would be refused as a whole.
	if v := doc.Services["open-webui"].Environment["OPENAI_API_KEY"]; strings.Contains(v, "${RAGPROXY_API_KEYS") {
		t.Errorf("open-webui's key is %q: the whole list of client keys, not one of them", v)
	}
	// The commands in the header comment export what the file requires.
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#\s+export (.*)$`).FindAllStringSubmatch(string(raw), -1) {
		for _, f := range strings.Fields(m[1]) {
			if name, _, ok := strings.Cut(f, "="); ok {
				exported[name] = true
			}
		}
	}
	var required []string
	for _, m := range regexp.MustCompile(`\$\{([A-Z0-9_]+):\?`).FindAllStringSubmatch(string(raw), -1) {
		if !slices.Contains(required, m[1]) {
			required = append(required, m[1])
		}
	}
	for _, name := range append(required, "RAGPROXY_ADMIN_KEYS") {
		if !exported[name] {
			t.Errorf("docker-compose.yml requires %s, which its set-up comment does not export", name)
		}
	}
}
