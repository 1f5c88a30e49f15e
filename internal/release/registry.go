package release

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// What a registry read did not find. Each is answered as its own OCI error code; an entity the caller
// may not view, or one of another organization, is not found like one that does not exist.
var (
	ErrNameUnknown     = errors.New("repository name not known to the registry")
	ErrManifestUnknown = errors.New("manifest unknown to the registry")
	ErrBlobUnknown     = errors.New("blob unknown to the registry")
)

// LatestTag names a repository's newest published Release the caller may view.
const LatestTag = "latest"

// EmptyConfig is the config blob of every bundle's manifest: the empty JSON object, as OCI artifacts
// without a config have.
var EmptyConfig = ocispec.DescriptorEmptyJSON

// Repository is a registry repository: the Releases of one Space that share a BundleBaseName, named
// "<organization slug>/<space slug>/<BundleBaseName>" in lowercase.
type Repository struct {
	SpaceID        uuid.UUID
	BundleBaseName string
}

// OpenRepository finds the repository a name names for the caller: the organization must be the
// caller's, the Space one it may see into, and the Space must have published under that BundleBaseName.
func OpenRepository(ctx context.Context, q *db.Queries, sc authz.Scope, name string) (Repository, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 3 {
		return Repository{}, ErrNameUnknown
	}
	org, err := q.OrganizationGetByID(ctx, sc.OrganizationID)
	if err != nil {
		return Repository{}, store.Translate(err)
	}
	if !strings.EqualFold(org.Slug, parts[0]) {
		return Repository{}, ErrNameUnknown
	}
	spaceID, err := q.ReleaseRepositorySpace(ctx, db.ReleaseRepositorySpaceParams{OrganizationID: sc.OrganizationID, Slug: parts[1]})
	if errors.Is(err, pgx.ErrNoRows) {
		return Repository{}, ErrNameUnknown
	}
	if err != nil {
		return Repository{}, err
	}
	if _, _, err := space.VisibleParent(ctx, sc, q, spaceID); err != nil {
		if apierr.Is(err, apierr.TypeNotFound) {
			return Repository{}, ErrNameUnknown
		}
		return Repository{}, err
	}
	repo := Repository{SpaceID: spaceID, BundleBaseName: parts[2]}
	exists, err := q.ReleaseRepositoryExists(ctx, db.ReleaseRepositoryExistsParams{SpaceID: spaceID, BundleBaseName: repo.BundleBaseName})
	if err != nil {
		return Repository{}, err
	}
	if !exists {
		return Repository{}, ErrNameUnknown
	}
	return repo, nil
}

// viewable converts a row and reports whether the caller may view it.
func viewable(sc authz.Scope, row *db.Release) (Release, bool, error) {
	r, err := fromRow(row)
	if err != nil {
		return r, false, err
	}
	return r, sc.Allows(authz.View, r.Target()), nil
}

// ByTag finds the Release a tag names: "latest" (the newest published one the caller may view) or a
// ReleaseNum (a published one). A withdrawn Release keeps its content, reachable by digest, but no tag.
func (repo Repository) ByTag(ctx context.Context, q *db.Queries, sc authz.Scope, tag string) (Release, error) {
	params := db.ReleasesByNumDescParams{SpaceID: repo.SpaceID, BundleBaseName: repo.BundleBaseName, PublishedOnly: true}
	if tag == LatestTag {
		const page = 100
		params.BeforeNum, params.PageSize = 1<<62, page
		for {
			rows, err := q.ReleasesByNumDesc(ctx, params)
			if err != nil {
				return Release{}, err
			}
			for _, row := range rows {
				if r, ok, err := viewable(sc, row); err != nil || ok {
					return r, err
				}
				params.BeforeNum = row.ReleaseNum
			}
			if len(rows) < page {
				return Release{}, ErrManifestUnknown
			}
		}
	}
	num, err := strconv.ParseInt(tag, 10, 64)
	if err != nil || num < 1 || strconv.FormatInt(num, 10) != tag {
		return Release{}, ErrManifestUnknown
	}
	params.BeforeNum, params.PageSize = num+1, 1
	rows, err := q.ReleasesByNumDesc(ctx, params)
	if err != nil {
		return Release{}, err
	}
	if len(rows) == 1 && rows[0].ReleaseNum == num {
		if r, ok, err := viewable(sc, rows[0]); err != nil || ok {
			return r, err
		}
	}
	return Release{}, ErrManifestUnknown
}

// byDigest finds a Release of the repository the caller may view whose manifest or bundle has the digest.
func (repo Repository) byDigest(ctx context.Context, q *db.Queries, sc authz.Scope, d digest.Digest) (Release, bool, error) {
	rows, err := q.ReleasesByDigest(ctx, db.ReleasesByDigestParams{OrganizationID: sc.OrganizationID, SpaceID: repo.SpaceID,
		BundleBaseName: repo.BundleBaseName, Digest: d.String()})
	if err != nil {
		return Release{}, false, err
	}
	for _, row := range rows {
		if r, ok, err := viewable(sc, row); err != nil || ok {
			return r, ok, err
		}
	}
	return Release{}, false, nil
}

// ByManifestDigest finds a Release of the repository whose manifest has the digest, withdrawn or not.
func (repo Repository) ByManifestDigest(ctx context.Context, q *db.Queries, sc authz.Scope, d digest.Digest) (Release, error) {
	r, ok, err := repo.byDigest(ctx, q, sc, d)
	if err == nil && (!ok || r.ManifestDigest != d.String()) {
		err = ErrManifestUnknown
	}
	return r, err
}

// Blob returns a blob of the repository: a bundle of one of its Releases the caller may view, or the
// empty config every manifest names.
func (repo Repository) Blob(ctx context.Context, q *db.Queries, sc authz.Scope, d digest.Digest) ([]byte, error) {
	if d == EmptyConfig.Digest {
		return EmptyConfig.Data, nil
	}
	r, ok, err := repo.byDigest(ctx, q, sc, d)
	if err != nil {
		return nil, err
	}
	if !ok || r.Digest != d.String() {
		return nil, ErrBlobUnknown
	}
	return Tarball(ctx, q, r)
}

// Tags lists the repository's tags in lexical order, as the distribution API orders them: the
// ReleaseNum of each published Release the caller may view, and "latest" when there is one.
func (repo Repository) Tags(ctx context.Context, q *db.Queries, sc authz.Scope) ([]string, error) {
	rows, err := q.ReleaseTags(ctx, db.ReleaseTagsParams{SpaceID: repo.SpaceID, BundleBaseName: repo.BundleBaseName})
	if err != nil {
		return nil, err
	}
	tags := make([]string, 0, len(rows)+1)
	for _, row := range rows {
		grants, err := store.DecodeJSON[authz.Grants](row.Permissions)
		if err != nil {
			return nil, fmt.Errorf("release %s permissions: %w", row.ReleaseID, err)
		}
		t := authz.Target{EntityType: EntityType, ID: row.ReleaseID.String(), Grants: grants.Normalized(), SpaceID: repo.SpaceID}
		if sc.Allows(authz.View, t) {
			tags = append(tags, strconv.FormatInt(row.ReleaseNum, 10))
		}
	}
	if len(tags) > 0 {
		tags = append(tags, LatestTag)
	}
	sort.Strings(tags)
	return tags, nil
}
