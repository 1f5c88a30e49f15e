package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/hubd/hubd/internal/worker"
)

// workerCmd runs the reference bridge worker: it carries out the worker's QueuedOperations on a
// directory (internal/worker). The secret comes from a file or the environment, so it stays out of the
// process list; --secret exists for trying things out.
func workerCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	baseURL := fs.String("base-url", env("HUBD_BASE_URL", "http://127.0.0.1:8080"), "hubd's base address (HUBD_BASE_URL)")
	workerID := fs.String("worker-id", env("HUBD_WORKER_ID", ""), "the BridgeWorker's ID (HUBD_WORKER_ID)")
	secretFile := fs.String("secret-file", env("HUBD_WORKER_SECRET_FILE", ""), "file holding the BridgeWorker's Secret (HUBD_WORKER_SECRET_FILE)")
	secret := fs.String("secret", "", "the BridgeWorker's Secret; prefer HUBD_WORKER_SECRET or --secret-file, which other users cannot read in the process list")
	dir := fs.String("dir", env("HUBD_WORKER_DIR", ""), "directory to write Units to, one folder per Space (HUBD_WORKER_DIR; created if missing)")
	pollSeconds := fs.Int("poll-seconds", int(envInt("HUBD_WORKER_POLL_SECONDS", 30)), "how long one poll waits for operations (HUBD_WORKER_POLL_SECONDS; at most 60)")
	logLevel := fs.String("log-level", env("HUBD_LOG_LEVEL", "info"), "debug, info, warn or error (HUBD_LOG_LEVEL)")
	_ = fs.Parse(args)

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	s, err := workerSecret(*secret, *secretFile)
	if err != nil {
		return err
	}
	if *workerID == "" || *dir == "" {
		return errors.New("worker: --worker-id (HUBD_WORKER_ID) and --dir (HUBD_WORKER_DIR) are required")
	}
	w, err := worker.New(worker.Config{BaseURL: *baseURL, WorkerID: *workerID, Secret: s, Dir: *dir, PollSeconds: *pollSeconds,
		Logger: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))})
	if err != nil {
		return err
	}
	return w.Run(ctx)
}

// workerSecret takes the secret from --secret, else --secret-file, else HUBD_WORKER_SECRET.
func workerSecret(flagged, file string) (string, error) {
	switch {
	case flagged != "":
		return flagged, nil
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("worker: --secret-file: %w", err)
		}
		if s := strings.TrimSpace(string(data)); s != "" {
			return s, nil
		}
		return "", fmt.Errorf("worker: --secret-file %s is empty", file)
	case os.Getenv("HUBD_WORKER_SECRET") != "":
		return strings.TrimSpace(os.Getenv("HUBD_WORKER_SECRET")), nil
	}
	return "", errors.New("worker: no secret: set HUBD_WORKER_SECRET, or name a file holding it with --secret-file")
}
