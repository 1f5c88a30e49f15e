package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePackage writes a package directory shaped like redoc's with the given script.
func fakePackage(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"package.json":                            `{"name": "redoc", "version": "9.9.9"}`,
		"bundles/redoc.standalone.js":             script,
		"bundles/redoc.standalone.js.LICENSE.txt": "licences",
		"LICENSE": "MIT",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGenerateReplacesOffOriginLoads(t *testing.T) {
	out := t.TempDir()
	if err := generate(fakePackage(t, `img.src="https://cdn.redoc.ly/redoc/logo-mini.svg";`), out); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join(out, "redoc.standalone.js"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(script), "https://") || !strings.Contains(string(script), "data:image/svg+xml") {
		t.Fatalf("the off-origin address was not replaced: %s", script)
	}
	embed, err := os.ReadFile(filepath.Join(out, "embed.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(embed), "redoc 9.9.9") || !strings.Contains(string(embed), "DO NOT EDIT") {
		t.Fatalf("embed.go does not name the package and version:\n%s", embed)
	}
}

func TestGenerateRefusesAnUpgradeThatLoadsOtherwise(t *testing.T) {
	err := generate(fakePackage(t, `img.src="https://cdn.example.com/new-logo.svg";`), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "update offOrigin") {
		t.Fatalf("got %v, want a refusal naming offOrigin", err)
	}
}
