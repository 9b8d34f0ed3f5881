package deploy

import (
	"os/exec"
	"testing"

	"github.com/ragproxy/ragproxy/internal/promtest"
)

// TestAlertRules checks the shipped alert rules with promtool and runs their unit tests (alerts_test.yml), and
// checks the compose stack's Prometheus configuration that loads them.
func TestAlertRules(t *testing.T) {
	_, promtool := promtest.Binaries(t)
	for _, args := range [][]string{
		{"check", "rules", "prometheus/alerts.yml"},
		{"test", "rules", "prometheus/alerts_test.yml"},
		{"check", "config", "prometheus/prometheus.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
