package oidcprovider

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/password"
	"github.com/hubd/hubd/internal/store"
)

// SetPassword gives a User the password they sign in with on the login page, replacing any earlier one.
func SetPassword(ctx context.Context, st *store.Store, userID uuid.UUID, pw string) error {
	if len([]rune(pw)) < password.MinLength {
		return fmt.Errorf("the password must have at least %d characters", password.MinLength)
	}
	hash, err := password.Hash(pw)
	if err != nil {
		return err
	}
	if err := st.Q().UserPasswordSet(ctx, db.UserPasswordSetParams{UserID: userID, PasswordHash: hash}); err != nil {
		return fmt.Errorf("setting the password: %w", err)
	}
	return nil
}
