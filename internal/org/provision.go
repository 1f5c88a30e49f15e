package org

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/auth"
	"github.com/hubd/hubd/internal/store"
)

// SignInPerson is the person an identity provider's token names, as first sign-in provisioning needs it.
type SignInPerson struct {
	// UserID is the existing User (the instance's own provider names Users by ID); nil when the person
	// is known only by ExternalID.
	UserID *uuid.UUID
	// ExternalID is the provider's subject (sub): the new User's ExternalID.
	ExternalID string
	// PreferredUsername, Email and DisplayName are the token's preferred_username, email and name claims:
	// the new User's Username comes from the first of them that is set (else ExternalID), made unique.
	PreferredUsername, Email, DisplayName string
}

// ProvisionMember makes person a member of orgID with role on first sign-in, creating the User when the
// provider's subject has none, in one transaction. First sign-ins of one subject are serialized, so two
// at once create one User; a membership made meanwhile is kept (with its role). It acts for the
// organization's own sign-in rule (Organization sign_in_provision_role), as no principal, so it takes no
// Scope.
func (s *Service) ProvisionMember(ctx context.Context, orgID uuid.UUID, person SignInPerson, role auth.Role) (auth.Principal, error) {
	if !role.Valid() {
		return auth.Principal{}, apierr.Unexpected(fmt.Errorf("organization %s provisions members with the role %q, which is not an organization role", orgID, role))
	}
	var p auth.Principal
	err := s.Store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		userID, err := provisionUser(ctx, tx, person)
		if err != nil {
			return err
		}
		if err := tx.Q.OrganizationLockForMembership(ctx, orgID); err != nil {
			return err
		}
		m, err := loadMember(ctx, tx.Q, orgID, userID)
		switch {
		case err == nil:
			role = m.OrgRole
		case apierr.Is(err, apierr.TypeNotFound):
			if err := addMember(ctx, tx, orgID, userID, role); err != nil {
				return err
			}
		default:
			return err
		}
		p = auth.Principal{UserID: userID, OrganizationID: orgID, Role: role}
		return nil
	})
	return p, err
}

// provisionUser returns the User of person, creating it when the provider's subject has none.
func provisionUser(ctx context.Context, tx *store.Tx, person SignInPerson) (uuid.UUID, error) {
	if person.UserID != nil {
		if _, err := tx.Q.UserGetByID(ctx, *person.UserID); err != nil {
			return uuid.Nil, err
		}
		return *person.UserID, nil
	}
	if person.ExternalID == "" {
		return uuid.Nil, apierr.UserInput("the identity provider's token names no subject (sub)")
	}
	if err := tx.Q.UserLockExternalID(ctx, person.ExternalID); err != nil {
		return uuid.Nil, err
	}
	rows, err := tx.Q.UserListByExternalID(ctx, person.ExternalID)
	if err != nil {
		return uuid.Nil, err
	}
	if len(rows) > 0 {
		return rows[0].UserID, nil
	}
	base := provisionedUsername(person)
	id := uuid.New()
	for attempt := 0; ; attempt++ {
		username := base
		if attempt > 0 {
			// Taken (or being taken): a suffix from the new ID, then random ones.
			suffix := id.String()[:8]
			if attempt > 1 {
				suffix = uuid.NewString()[:8]
			}
			username = base + "-" + suffix
		}
		var row *db.User
		err := tx.Savepoint(ctx, func(sp *store.Tx) error {
			if _, err := sp.Q.UserGetByUsername(ctx, username); err == nil {
				return apierr.AlreadyExists("User", username)
			} else if !apierr.Is(err, apierr.TypeNotFound) {
				return err
			}
			slug := slugFor(username)
			if taken, err := sp.Q.UserSlugTaken(ctx, slug); err != nil {
				return err
			} else if taken {
				slug = slug + "-" + uuid.NewString()[:8]
			}
			row, err = sp.Q.UserInsert(ctx, db.UserInsertParams{UserID: id, Username: username, Slug: slug,
				DisplayName: person.DisplayName, ExternalID: person.ExternalID})
			return err
		})
		switch {
		case err == nil:
			return row.UserID, nil
		case apierr.Is(err, apierr.TypeAlreadyExists) && attempt < 5:
			continue
		default:
			return uuid.Nil, err
		}
	}
}

// provisionedUsername is the Username a provisioned User asks for: preferred_username, else email, else
// the subject, fitted to what a Username may hold (no spaces or control characters, at most 119
// characters so a suffix fits, never a bot's form).
func provisionedUsername(person SignInPerson) string {
	for _, v := range []string{person.PreferredUsername, person.Email, person.ExternalID} {
		v = strings.Map(func(r rune) rune {
			if r <= ' ' || r == 0x7f {
				return -1
			}
			return r
		}, v)
		if r := []rune(v); len(r) > 119 {
			v = string(r[:119])
		}
		if v != "" && usernamePattern.MatchString(v) && !botUsername.MatchString(v) {
			return v
		}
	}
	return "user"
}
