// Package variants holds a runnable walk through variants, upgrades, conflicts and Links (walkthrough.sh).
package variants_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/hubd/hubd/internal/apitest"
	"github.com/hubd/hubd/internal/auth"
)

// TestVariantsWalkthrough runs walkthrough.sh against a real hubd and checks what it shows: the upgrade
// reached every variant and kept their overrides, prod's conflict was dismissed, and a database move reached
// prod's web through its Link.
func TestVariantsWalkthrough(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walkthrough needs %s: %v", tool, err)
		}
	}
	env := apitest.New(t)
	cmd := exec.Command("bash", "walkthrough.sh")
	cmd.Env = append(cmd.Environ(), "HUBD="+env.URL, "TOKEN="+env.Token("acme", "alice", auth.RoleAdmin))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walkthrough.sh: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"dev      replicas: 3 image: shop/web:1.1",
		"staging  replicas: 2 image: shop/web:1.1",
		"prod     replicas: 5 image: shop/web:1.1",
		`"Reason":"UnresolvedPath"`,
		`{"Dismissed":1,"Outstanding":[]}`,
		"value: warn",
		"value: db-2.prod.internal",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, text)
		}
	}
}
