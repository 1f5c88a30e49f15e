package oauthclient

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// EntityType names the family in errors.
const EntityType = "OAuthClient"

// NotifyChannel is the PostgreSQL channel a create or delete notifies on commit: registered redirect
// URIs changed, so every replica reloads the CORS origins it allows.
const NotifyChannel = "hubd_oauth_client"

// Quota is how many clients an organization may register, unless it is trusted.
const Quota = 10

// Client is a registered public OAuth client.
type Client struct {
	ClientID       string
	Name           string
	RedirectURIs   []string
	AllowAllOrgs   bool
	OrganizationID uuid.UUID
	CreatedAt      time.Time
}

// Input is what a caller registers.
type Input struct {
	Name         string
	RedirectURIs []string
	AllowAllOrgs bool
}

// Service registers, reads and deletes clients, and keeps this replica's set of allowed CORS origins.
type Service struct {
	store *store.Store
	log   *slog.Logger
	// trusted are the Slugs of the organizations exempt from Quota that may set AllowAllOrgs.
	trusted map[string]bool

	reload  sync.Mutex // one reload at a time, so the last to finish read the newest rows
	origins atomic.Pointer[map[string]bool]
}

// NewService returns the Service; trustedOrgs are organization Slugs (--trusted-orgs).
func NewService(st *store.Store, trustedOrgs []string, log *slog.Logger) *Service {
	s := &Service{store: st, log: log, trusted: map[string]bool{}}
	for _, slug := range trustedOrgs {
		s.trusted[slug] = true
	}
	s.origins.Store(&map[string]bool{})
	return s
}

func fromRow(r *db.OauthClient) Client {
	uris := r.RedirectUris
	if uris == nil {
		uris = []string{}
	}
	return Client{ClientID: r.ClientID, Name: r.Name, RedirectURIs: uris, AllowAllOrgs: r.AllowAllOrgs,
		OrganizationID: r.OrganizationID, CreatedAt: r.CreatedAt.UTC()}
}

// newClientID is "hubd-" and 26 lowercase base32 characters of 16 random bytes: unguessable, URL-safe
// and the same whatever the case a person types it in.
func newClientID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "hubd-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// validate checks and normalizes in (the document bounds the lengths; this states the rules).
func validate(in Input) (Input, error) {
	name := in.Name
	if strings.TrimSpace(name) == "" || len(name) > 100 {
		return in, apierr.UserInput("Name is required: 1 to 100 characters", apierr.Item{Item: "Name", Description: "required"})
	}
	if strings.ContainsRune(name, '/') || strings.IndexFunc(name, unicode.IsControl) >= 0 || strings.TrimSpace(name) != name {
		return in, apierr.UserInput(fmt.Sprintf("Name %q may not contain '/' or control characters, nor begin or end with spaces (it names the client in paths)", name),
			apierr.Item{Item: "Name", Description: "not allowed"})
	}
	if len(in.RedirectURIs) == 0 || len(in.RedirectURIs) > 20 {
		return in, apierr.UserInput("RedirectURIs is required: 1 to 20 exact redirect URIs", apierr.Item{Item: "RedirectURIs", Description: "required"})
	}
	uris, err := NormalizeRedirectURIs(in.RedirectURIs)
	if err != nil {
		ue := err.(*RedirectURIError)
		return in, apierr.UserInput(ue.Error(), apierr.Item{Item: fmt.Sprintf("RedirectURIs.%d", ue.Index), Description: ue.Reason.Error()})
	}
	in.RedirectURIs = uris
	return in, nil
}

// Create registers a client in sc's organization. It needs the admin role. Name is unique in the
// organization (409 Conflict); the organization holds at most Quota clients unless trusted (422); only a
// trusted organization may set AllowAllOrgs (403).
func (s *Service) Create(ctx context.Context, sc authz.Scope, in Input) (Client, error) {
	if err := authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return Client{}, err
	}
	in, err := validate(in)
	if err != nil {
		return Client{}, err
	}
	var out Client
	err = s.store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		if err := tx.Q.OAuthClientLockOrganization(ctx, sc.OrganizationID); err != nil {
			return err
		}
		org, err := tx.Q.OrganizationGetByID(ctx, sc.OrganizationID)
		if err != nil {
			return apierr.NotFoundAs(err, "Organization", sc.OrganizationID.String())
		}
		trusted := s.trusted[org.Slug]
		if in.AllowAllOrgs && !trusted {
			return apierr.Forbidden("only a trusted organization of this instance may register a client with AllowAllOrgs; organization %q is not one", org.Slug)
		}
		if !trusted {
			n, err := tx.Q.OAuthClientCountInOrg(ctx, sc.OrganizationID)
			if err != nil {
				return err
			}
			if n >= Quota {
				return apierr.Unprocessable("the organization already has %d OAuthClients, the most it may register; delete one it no longer uses", n)
			}
		}
		var user *uuid.UUID
		if sc.UserID != uuid.Nil {
			user = &sc.UserID
		}
		row, err := tx.Q.OAuthClientCreate(ctx, db.OAuthClientCreateParams{ClientID: newClientID(), OrganizationID: sc.OrganizationID,
			Name: in.Name, RedirectUris: in.RedirectURIs, AllowAllOrgs: in.AllowAllOrgs, UserID: user})
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			e := apierr.Conflict("an OAuthClient named %q already exists in this organization; choose another Name", in.Name).WithEntity(EntityType, "", in.Name)
			e.Items = []apierr.Item{{Item: "Name", Description: "already in use"}}
			return e
		}
		if err != nil {
			return err
		}
		out = fromRow(row)
		return tx.Q.OAuthClientNotify(ctx)
	})
	if err != nil {
		return Client{}, err
	}
	s.reloadAfterWrite(ctx)
	return out, nil
}

// List answers the clients of sc's organization, ordered by Name.
func (s *Service) List(ctx context.Context, sc authz.Scope) ([]Client, error) {
	if err := authz.Check(sc, authz.View, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return nil, err
	}
	rows, err := s.store.Q().OAuthClientListByOrg(ctx, sc.OrganizationID)
	if err != nil {
		return nil, err
	}
	out := make([]Client, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

// Get answers a client of sc's organization by ClientID or Name; any other is NotFound.
func (s *Service) Get(ctx context.Context, sc authz.Scope, ref string) (Client, error) {
	if err := authz.Check(sc, authz.View, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return Client{}, err
	}
	row, err := s.store.Q().OAuthClientGetInOrg(ctx, db.OAuthClientGetInOrgParams{OrganizationID: sc.OrganizationID, Ref: ref})
	if err != nil {
		return Client{}, apierr.NotFoundAs(err, EntityType, ref)
	}
	return fromRow(row), nil
}

// Delete removes a client of sc's organization by ClientID or Name. It needs the admin role. Apps using
// it can no longer sign in, and its origins leave the CORS origins of every replica.
func (s *Service) Delete(ctx context.Context, sc authz.Scope, ref string) error {
	if err := authz.Check(sc, authz.ManageOrganization, authz.OrganizationTarget(sc.OrganizationID)); err != nil {
		return err
	}
	err := s.store.WithTx(ctx, store.TxOptions{}, func(tx *store.Tx) error {
		row, err := tx.Q.OAuthClientGetInOrg(ctx, db.OAuthClientGetInOrgParams{OrganizationID: sc.OrganizationID, Ref: ref})
		if err != nil {
			return apierr.NotFoundAs(err, EntityType, ref)
		}
		n, err := tx.Q.OAuthClientDelete(ctx, db.OAuthClientDeleteParams{OrganizationID: sc.OrganizationID, ClientID: row.ClientID})
		if err != nil {
			return err
		}
		if n == 0 { // deleted meanwhile by another request
			return apierr.NotFound(EntityType, ref)
		}
		return tx.Q.OAuthClientNotify(ctx)
	})
	if err != nil {
		return err
	}
	s.reloadAfterWrite(ctx)
	return nil
}

// reloadAfterWrite makes this replica's origins reflect a write it committed before answering, rather
// than when its own notification comes back.
func (s *Service) reloadAfterWrite(ctx context.Context) {
	if err := s.Reload(context.WithoutCancel(ctx)); err != nil {
		s.log.WarnContext(ctx, "reloading OAuth client origins", "err", err)
	}
}

// Reload reads the registered redirect URIs and replaces the allowed origins with theirs.
func (s *Service) Reload(ctx context.Context) error {
	s.reload.Lock()
	defer s.reload.Unlock()
	uris, err := s.store.Q().OAuthClientRedirectURIs(ctx)
	if err != nil {
		return err
	}
	set := make(map[string]bool, len(uris))
	for _, u := range uris {
		if o := Origin(u); o != "" {
			set[o] = true
		}
	}
	s.origins.Store(&set)
	return nil
}

// ReloadQuietly is Reload for background callers (notifications, the periodic safety net): a failure is
// logged, and the previous set stays until the next reload.
func (s *Service) ReloadQuietly(ctx context.Context) {
	if err := s.Reload(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("reloading OAuth client origins", "err", err)
	}
}

// AllowsOrigin reports whether origin (a browser's Origin header) is the origin of a registered redirect URI.
func (s *Service) AllowsOrigin(origin string) bool {
	return (*s.origins.Load())[origin]
}
