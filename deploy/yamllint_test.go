package deploy

import (
	"os/exec"
	"testing"
)

// TestYAMLLint lints every YAML file under deploy with yamllint (Debian package yamllint) and the rules in
// .yamllint.yaml, skipping when yamllint is not installed.
func TestYAMLLint(t *testing.T) {
	bin, err := exec.LookPath("yamllint")
	if err != nil {
		t.Skip("yamllint not on PATH (Debian package yamllint): skipping")
	}
	if out, err := exec.Command(bin, "--strict", "-c", ".yamllint.yaml", ".").CombinedOutput(); err != nil {
		t.Errorf("yamllint: %v\n%s", err, out)
	}
}
