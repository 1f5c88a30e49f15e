package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/hubd/hubd/gen/db"
)

// SettingIssuer is the tokens' issuer (the base address) serve last started with.
const SettingIssuer = "issuer"

// PutSetting records an instance setting and returns the value it replaced ("" when there was none).
func (s *Store) PutSetting(ctx context.Context, name, value string) (string, error) {
	previous, err := s.Q().InstanceSettingPut(ctx, db.InstanceSettingPutParams{Name: name, Value: value})
	if err != nil {
		return "", fmt.Errorf("recording setting %s: %w", name, Translate(err))
	}
	return previous, nil
}

// Setting returns a recorded instance setting; false when none is recorded.
func (s *Store) Setting(ctx context.Context, name string) (string, bool, error) {
	value, err := s.Q().InstanceSettingGet(ctx, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading setting %s: %w", name, Translate(err))
	}
	return value, true, nil
}
