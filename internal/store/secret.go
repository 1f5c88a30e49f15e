package store

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/hubd/hubd/gen/db"
)

// Secret returns the named random secret shared by every replica, creating it on first use.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	return s.EnsureSecret(ctx, name, fresh)
}

// EnsureSecret stores fresh under name unless a secret of that name exists, and returns the stored one:
// replicas starting at once agree on the first one written.
func (s *Store) EnsureSecret(ctx context.Context, name string, fresh []byte) ([]byte, error) {
	q := s.Q()
	if err := q.InstanceSecretEnsure(ctx, db.InstanceSecretEnsureParams{Name: name, Secret: fresh}); err != nil {
		return nil, fmt.Errorf("creating secret %s: %w", name, Translate(err))
	}
	secret, err := q.InstanceSecretGet(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("reading secret %s: %w", name, Translate(err))
	}
	return secret, nil
}
