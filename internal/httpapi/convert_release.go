package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/release"
	"github.com/hubd/hubd/internal/unit"
)

// releaseEdge serves the Release operations the kit serves alike (list, get, update, patch, delete);
// the publish, the bundle and the withdraw are below.
var releaseEdge = &edge[release.Release, release.Fields, api.Release, api.ExtendedRelease]{
	service: served(release.Family),
	listing: release.ListEntity,
	toAPI:   releaseToAPI,
	fields:  releaseFields,
	relations: []relation[release.Release]{inSpace[release.Release](),
		byID("TagID", func(r release.Release) []uuid.UUID { return optionalID(r.TagID) }, tagEdge.load)},
	extended: func(r release.Release, a api.Release, rel *related) api.ExtendedRelease {
		return api.ExtendedRelease{Release: a, Organization: rel.organization, Space: relatedOne[api.Space](rel, "SpaceID", r.SpaceID),
			Tag: relatedOptional[api.Tag](rel, "TagID", r.TagID)}
	},
}

func releaseToAPI(r release.Release) api.Release {
	skipped := make([]api.ReleaseSkippedUnit, len(r.SkippedUnits))
	for i, s := range r.SkippedUnits {
		skipped[i] = api.ReleaseSkippedUnit{UnitID: s.UnitID, Slug: s.Slug, Reason: s.Reason}
	}
	return api.Release{ReleaseID: r.ID, SpaceID: r.SpaceID, OrganizationID: r.OrganizationID, UserID: r.UserID, ReleaseNum: r.ReleaseNum,
		TargetID: r.TargetID, TagID: r.TagID, ChangeOrderID: r.ChangeOrderID, BundleBaseName: r.BundleBaseName, Description: r.Description,
		Digest: r.Digest, ManifestDigest: r.ManifestDigest, DataSize: r.DataSize, UnitCount: r.UnitCount, SkippedUnits: skipped,
		Published: r.Published, LiveStatus: r.LiveStatus, Labels: r.Labels, Annotations: r.Annotations, DeleteGates: r.DeleteGates,
		Permissions: permissionsToAPI(r.Permissions), HiddenReason: r.HiddenReason, EntityType: release.EntityType,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Version: r.Version}
}

func releaseFields(b *api.Release) release.Fields {
	var skipped []release.SkippedUnit
	for _, s := range b.SkippedUnits {
		skipped = append(skipped, release.SkippedUnit{UnitID: s.UnitID, Slug: s.Slug, Reason: s.Reason})
	}
	return release.Fields{Common: entity.Common{Permissions: permissionsFromAPI(b.Permissions),
		Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		LiveStatus: b.LiveStatus, UserID: b.UserID, ReleaseNum: b.ReleaseNum, TargetID: b.TargetID, TagID: b.TagID,
		ChangeOrderID: b.ChangeOrderID, BundleBaseName: b.BundleBaseName, Description: b.Description, Digest: b.Digest,
		ManifestDigest: b.ManifestDigest, DataSize: b.DataSize, UnitCount: b.UnitCount, SkippedUnits: skipped, Published: b.Published}
}

// PublishRelease is the kit's create of a Release, from a ReleasePublishRequest; a refusal by gates or by a
// Component's ChangeWorkflow policy is its own 422 answer (ReleasePublishResponse).
func (h *handlers) PublishRelease(ctx context.Context, r api.PublishReleaseRequestObject) (api.PublishReleaseResponseObject, error) {
	b := r.Body
	f := release.Fields{Common: entity.Common{Meta: entity.Meta{Labels: b.Labels, Annotations: b.Annotations, DeleteGates: b.DeleteGates}},
		LiveStatus: b.LiveStatus, TargetID: b.TargetID, TagID: b.TagID, ChangeOrderID: b.ChangeOrderID, BundleBaseName: b.BundleBaseName,
		Description: b.Description}
	e, err := releaseEdge.of(h.base).Create(ctx, scopeOf(ctx), r.SpaceId, f, entity.WriteOptions{DryRun: flag(r.Params.DryRun)})
	var refusal *release.GateRefusal
	if errors.As(err, &refusal) {
		gates := make([]api.ReleaseGate, len(refusal.Gates))
		for i, g := range refusal.Gates {
			gates[i] = api.ReleaseGate{UnitID: g.UnitID, UnitSlug: g.UnitSlug, Gate: g.Gate, Blocking: g.Blocking}
		}
		re := responseError(refusal.Refusal())
		return api.PublishRelease422JSONResponse{Body: api.ReleasePublishResponse{Gates: gates, Error: &re}}, nil
	}
	var refused *apierr.Error
	if errors.As(err, &refused) && refused.Type == apierr.TypeUnprocessable {
		// Refused by the Component's ChangeWorkflow policy: the same body, without Gates.
		re := responseError(refused)
		return api.PublishRelease422JSONResponse{Body: api.ReleasePublishResponse{Gates: []api.ReleaseGate{}, Error: &re}}, nil
	}
	if err != nil {
		return nil, err
	}
	return api.PublishRelease200JSONResponse{Body: releaseToAPI(e)}, nil
}

// WithdrawRelease takes a Release out of service.
func (h *handlers) WithdrawRelease(ctx context.Context, r api.WithdrawReleaseRequestObject) (api.WithdrawReleaseResponseObject, error) {
	e, err := release.Withdraw(ctx, h.s.deps.Store, scopeOf(ctx), r.SpaceId, r.ReleaseId.String(), flag(r.Params.DryRun))
	if err != nil {
		return nil, err
	}
	return api.WithdrawRelease200JSONResponse{Body: releaseToAPI(e)}, nil
}

// DownloadReleaseData serves the bundle; its ETag is the quoted Digest.
func (h *handlers) DownloadReleaseData(ctx context.Context, r api.DownloadReleaseDataRequestObject) (api.DownloadReleaseDataResponseObject, error) {
	sc := scopeOf(ctx)
	e, err := releaseEdge.of(h.base).Get(ctx, sc, r.SpaceId, r.ReleaseId.String())
	if err != nil {
		return nil, err
	}
	out := bundleResponse{digest: e.Digest, notModified: r.Params.IfNoneMatch != nil && unit.ETagMatches(*r.Params.IfNoneMatch, e.Digest)}
	if !out.notModified {
		if out.data, err = release.Tarball(ctx, h.s.deps.Store.Q(), e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bundleResponse writes a Release's bundle with its ETag, or 304 when If-None-Match names it.
type bundleResponse struct {
	data        []byte
	digest      string
	notModified bool
}

func (r bundleResponse) VisitDownloadReleaseDataResponse(w http.ResponseWriter) error {
	w.Header().Set("ETag", `"`+r.digest+`"`)
	if r.notModified {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(r.data)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r.data)
	return err
}
