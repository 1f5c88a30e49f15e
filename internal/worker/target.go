package worker

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubd/hubd/internal/configdata"
)

// Target is the directory operations are carried out on: <dir>/<Space Slug>/<Unit Slug>.<ext>.
type Target struct{ dir string }

// NewTarget checks that dir is a directory, creating it when missing.
func NewTarget(dir string) (*Target, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("worker: the directory: %w", err)
	}
	return &Target{dir: abs}, nil
}

// Dir is the target's absolute directory.
func (t *Target) Dir() string { return t.dir }

// Outcome is what carrying out an operation came to: Err set means Failed.
type Outcome struct {
	Message string
	Data    []byte // the live configuration, for Refresh and Import
	Err     error
}

// extensions names each ToolchainType's file extension.
var extensions = map[string]string{
	configdata.KubernetesYAML:      "yaml",
	configdata.AppConfigYAML:       "yaml",
	configdata.AppConfigJSON:       "json",
	configdata.AppConfigTOML:       "toml",
	configdata.AppConfigINI:        "ini",
	configdata.AppConfigProperties: "properties",
	configdata.AppConfigEnv:        "env",
	configdata.AppConfigText:       "txt",
}

// Extension is the file extension of a ToolchainType ("" when the worker does not serve it).
func Extension(toolchainType string) string { return extensions[toolchainType] }

// Path is where an operation's Unit lives.
func (t *Target) Path(op QueuedOperation) (string, error) {
	ext := Extension(op.ToolchainType)
	if ext == "" {
		return "", fmt.Errorf("this worker does not serve ToolchainType %q", op.ToolchainType)
	}
	for _, s := range []struct{ what, slug string }{{"Space", op.SpaceSlug}, {"Unit", op.UnitSlug}} {
		// Slugs are hubd's and safe; a slug that is not would write outside the directory.
		if s.slug == "" || s.slug == "." || s.slug == ".." || strings.ContainsAny(s.slug, `/\`+"\x00") {
			return "", fmt.Errorf("the %s Slug %q cannot name a file", s.what, s.slug)
		}
	}
	return filepath.Join(t.dir, op.SpaceSlug, op.UnitSlug+"."+ext), nil
}

// dryRunShown bounds how much of the data a dry run's Message shows.
const dryRunShown = 4096

// Do carries out an operation.
func (t *Target) Do(op QueuedOperation) Outcome {
	path, err := t.Path(op)
	if err != nil {
		return Outcome{Err: err}
	}
	switch op.Action {
	case "Apply":
		return t.apply(path, op)
	case "Destroy":
		return t.destroy(path, op)
	case "Refresh", "Import":
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return Outcome{Err: fmt.Errorf("%s does not exist: the Unit has not been applied here, or its file was removed", path)}
		}
		if err != nil {
			return Outcome{Err: fmt.Errorf("reading %s: %w", path, err)}
		}
		return Outcome{Message: fmt.Sprintf("read %d bytes from %s", len(data), path), Data: data}
	}
	return Outcome{Err: fmt.Errorf("this worker does not carry out the action %q", op.Action)}
}

func (t *Target) apply(path string, op QueuedOperation) Outcome {
	current, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Outcome{Err: fmt.Errorf("reading %s: %w", path, err)}
	}
	if op.DryRun {
		change := "create"
		switch {
		case exists && bytes.Equal(current, op.Data):
			change = "leave unchanged"
		case exists:
			change = "replace"
		}
		shown, more := op.Data, ""
		if len(shown) > dryRunShown {
			shown, more = shown[:dryRunShown], fmt.Sprintf("\n[%d more bytes]", len(op.Data)-dryRunShown)
		}
		return Outcome{Message: fmt.Sprintf("dry run: would %s %s (%d bytes):\n%s%s", change, path, len(op.Data), shown, more)}
	}
	if err := writeAtomically(path, op.Data); err != nil {
		return Outcome{Err: err}
	}
	return Outcome{Message: fmt.Sprintf("wrote %d bytes to %s", len(op.Data), path)}
}

func (t *Target) destroy(path string, op QueuedOperation) Outcome {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Outcome{Message: fmt.Sprintf("%s was already absent", path)}
	}
	if err != nil {
		return Outcome{Err: fmt.Errorf("reading %s: %w", path, err)}
	}
	if op.DryRun {
		return Outcome{Message: fmt.Sprintf("dry run: would remove %s", path)}
	}
	if err := os.Remove(path); err != nil {
		return Outcome{Err: fmt.Errorf("removing %s: %w", path, err)}
	}
	return Outcome{Message: fmt.Sprintf("removed %s", path)}
}

// writeAtomically replaces path with data so that a reader sees the old file or the new one, never a part:
// it writes a temporary file beside it, syncs it and renames it over path, creating the Space folder.
func writeAtomically(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	// The rename is durable once the directory is synced.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
