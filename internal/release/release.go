// Package release holds the rules of Releases: published bundles of the configuration of the Units of a
// Space assigned to one Target. A publish bundles each Unit's head Revision (or its latest Revision
// carrying a Tag) into a reproducible gzip tarball, stored once by digest; what was bundled never changes,
// only Labels, Annotations, DeleteGates, LiveStatus and Permissions do, and a withdraw takes the Release
// out of service.
package release

import (
	"context"
	"fmt"
	"reflect"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/changeorder"
	"github.com/hubd/hubd/internal/component"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
	"github.com/hubd/hubd/internal/target"
)

// EntityType is the Release's type name.
const EntityType = "Release"

// Release is a stored Release.
type Release struct {
	entity.Object
	Fields
	// Manifest is the OCI image manifest of the bundle, as published (its digest is ManifestDigest).
	Manifest []byte
	// RevisionIDs are the Revisions bundled.
	RevisionIDs []uuid.UUID
}

// SkippedUnit is a Unit of the Target left out of a bundle.
type SkippedUnit struct {
	UnitID uuid.UUID `json:"UnitID"`
	Slug   string    `json:"Slug"`
	Reason string    `json:"Reason"`
}

// Fields are a Release's attributes: what may change (the common maps, Permissions, LiveStatus) and
// what the publish set and nothing changes after (a write changing one is refused, naming it).
type Fields struct {
	entity.Common
	LiveStatus string `json:"LiveStatus"`

	UserID         uuid.UUID     `json:"UserID"`
	ReleaseNum     int64         `json:"ReleaseNum"`
	TargetID       uuid.UUID     `json:"TargetID"`
	TagID          *uuid.UUID    `json:"TagID"`
	ChangeOrderID  *uuid.UUID    `json:"ChangeOrderID"`
	BundleBaseName string        `json:"BundleBaseName"`
	Description    string        `json:"Description"`
	Digest         string        `json:"Digest"`
	ManifestDigest string        `json:"ManifestDigest"`
	DataSize       int64         `json:"DataSize"`
	UnitCount      int64         `json:"UnitCount"`
	SkippedUnits   []SkippedUnit `json:"SkippedUnits"`
	Published      bool          `json:"Published"`

	// published is what the publish's Check built, for InsertRow.
	published *publication
}

// publication is a publish's result before it is stored.
type publication struct {
	bundle      Bundle
	unitIDs     []uuid.UUID
	revisionIDs []uuid.UUID
	revNums     []int64
}

func fromRow(r *db.Release) (Release, error) {
	c, err := entity.DecodeCommon("", "", r.Labels, r.Annotations, r.DeleteGates, r.Permissions)
	if err != nil {
		return Release{}, err
	}
	c.Permissions = c.Permissions.Normalized()
	rel := Release{
		Object: entity.Object{ID: r.ReleaseID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{Common: c, LiveStatus: r.LiveStatus, UserID: r.UserID, ReleaseNum: r.ReleaseNum, TargetID: r.TargetID,
			TagID: r.TagID, ChangeOrderID: r.ChangeOrderID, BundleBaseName: r.BundleBaseName, Description: r.Description,
			Digest: r.Digest, ManifestDigest: r.ManifestDigest, DataSize: r.DataSize, UnitCount: r.UnitCount, Published: r.Published},
		Manifest: r.Manifest, RevisionIDs: r.RevisionIDs,
	}
	rel.SkippedUnits, err = store.DecodeJSON[[]SkippedUnit](r.SkippedUnits)
	if rel.SkippedUnits == nil {
		rel.SkippedUnits = []SkippedUnit{}
	}
	return rel, err
}

// Target is the Release as a permission target.
func (r Release) Target() authz.Target {
	return authz.Target{EntityType: EntityType, ID: r.ID.String(), Grants: r.Permissions, SpaceID: r.SpaceID}
}

// ListEntity is how Releases are listed (indexes: migration 000037). A Release has no Slug or
// DisplayName: it is named by ID (and numbered by ReleaseNum in its Space).
var ListEntity = listquery.Standard{Table: "release", ID: "ReleaseID", InSpace: true, Permissions: true, Record: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"BundleBaseName", "Description", "LiveStatus", "Labels", "Annotations"},
	Includes:      []listquery.Include{{Name: "TagID", Field: "Tag"}},
	Attributes: []listquery.Attribute{
		{Name: "UserID", Type: listquery.UUID, SQL: "release.user_id", Filterable: true, Orderable: true},
		{Name: "ReleaseNum", Type: listquery.Int, SQL: "release.release_num", Filterable: true, Orderable: true},
		{Name: "TargetID", Type: listquery.UUID, SQL: "release.target_id", Filterable: true, Orderable: true},
		listquery.NullableUUID("TagID", "release.tag_id"),
		listquery.NullableUUID("ChangeOrderID", "release.change_order_id"),
		{Name: "BundleBaseName", Type: listquery.String, SQL: "release.bundle_base_name", Filterable: true},
		{Name: "Description", Type: listquery.String, SQL: "release.description", Filterable: true},
		{Name: "Digest", Type: listquery.String, SQL: "release.digest", Filterable: true, Orderable: true},
		{Name: "ManifestDigest", Type: listquery.String, SQL: "release.manifest_digest", Filterable: true, Orderable: true},
		{Name: "DataSize", Type: listquery.Int, SQL: "release.data_size", Filterable: true},
		{Name: "UnitCount", Type: listquery.Int, SQL: "release.unit_count", Filterable: true, Orderable: true},
		{Name: "Published", Type: listquery.Bool, SQL: "release.published", Filterable: true, Orderable: true},
		{Name: "LiveStatus", Type: listquery.String, SQL: "release.live_status", Filterable: true},
		{Name: "SkippedUnits", Type: listquery.Opaque},
		{Name: "Labels", Type: listquery.StringMap, SQL: "release.labels", Filterable: true},
		{Name: "Annotations", Type: listquery.StringMap, SQL: "release.annotations", Filterable: true},
		{Name: "DeleteGates", Type: listquery.BoolMap, SQL: "release.delete_gates", Filterable: true},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "release.updated_at", Filterable: true, Orderable: true},
		{Name: "Version", Type: listquery.Opaque},
	},
})

// Family declares Releases to the entity kit: a Release lives in a Space and carries Permissions; the
// kit's create is the publish (CreateChildren on the Space; Check builds and checks the bundle), its
// update changes only what may change.
var Family = entity.Declare(&entity.Family[db.Release, Release, Fields]{
	Type: EntityType, Event: "release", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Release, error) {
		p := f.published
		if p == nil { // only a publish (Check) creates a Release
			return nil, fmt.Errorf("release: insert without a publication")
		}
		if err := q.ReleaseBundleInsert(ctx, db.ReleaseBundleInsertParams{Digest: p.bundle.Digest.String(), Data: p.bundle.Tarball,
			DataSize: int64(len(p.bundle.Tarball))}); err != nil {
			return nil, err
		}
		row, err := q.ReleaseInsert(ctx, db.ReleaseInsertParams{ReleaseID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			UserID: sc.UserID, ReleaseNum: f.ReleaseNum, TargetID: f.TargetID, TagID: f.TagID, ChangeOrderID: f.ChangeOrderID, BundleBaseName: f.BundleBaseName,
			Description: f.Description, Digest: f.Digest, ManifestDigest: f.ManifestDigest, Manifest: p.bundle.Manifest,
			DataSize: f.DataSize, UnitCount: f.UnitCount, RevisionIDs: p.revisionIDs, SkippedUnits: store.EncodeJSON(f.SkippedUnits),
			LiveStatus: f.LiveStatus, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates), Permissions: store.EncodeJSON(f.Permissions)})
		if err != nil {
			return nil, err
		}
		return row, q.ReleaseMarkUnits(ctx, db.ReleaseMarkUnitsParams{OrganizationID: sc.OrganizationID, UnitIds: p.unitIDs, RevisionNums: p.revNums})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Release, f Fields) (*db.Release, error) {
		return q.ReleaseUpdate(ctx, db.ReleaseUpdateParams{OrganizationID: sc.OrganizationID, ReleaseID: cur.ID, Version: cur.Version,
			Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations), DeleteGates: store.EncodeJSON(f.DeleteGates),
			LiveStatus: f.LiveStatus, Permissions: store.EncodeJSON(f.Permissions)})
	},
	FromRow: fromRow,
})

type strategy struct{}

// Normalize keeps the common fields a Release has (no Slug or DisplayName) and checks them.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = entity.Common{Permissions: f.Permissions.Normalized(), Meta: f.Meta.Normalized()}
	if err := f.Meta.Validate(); err != nil {
		return f, err
	}
	if len(f.LiveStatus) > 256 {
		return f, apierr.UserInput("LiveStatus is at most 256 characters", apierr.Item{Item: "LiveStatus", Description: "too long"})
	}
	return f, f.Permissions.Validate("Permissions")
}

// OnPut: a content field left out of a PUT keeps its value (the body is a Release, whose content fields
// a client need not send back).
func (strategy) OnPut(cur Release, f Fields) Fields {
	keep := f.Common
	live := f.LiveStatus
	sent := f
	f = cur.Fields
	f.Common, f.LiveStatus = keep, live
	z := reflect.ValueOf(&f).Elem()
	s := reflect.ValueOf(sent)
	for _, name := range contentFields {
		if v := s.FieldByName(name); !v.IsZero() {
			z.FieldByName(name).Set(v)
		}
	}
	return f
}

// contentFields are the Fields the publish sets and no write changes.
var contentFields = []string{"UserID", "ReleaseNum", "TargetID", "TagID", "ChangeOrderID", "BundleBaseName", "Description", "Digest",
	"ManifestDigest", "DataSize", "UnitCount", "SkippedUnits", "Published"}

// Check: on create, the publish (the bundle built and its gates evaluated); on update, the refusal of a
// change to what was published.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *Release, f Fields) (Fields, error) {
	if cur == nil {
		return publish(ctx, tx, sc, spaceID, f)
	}
	got, was := reflect.ValueOf(f), reflect.ValueOf(cur.Fields)
	for _, name := range contentFields {
		a, b := got.FieldByName(name).Interface(), was.FieldByName(name).Interface()
		if name == "SkippedUnits" && len(f.SkippedUnits) == 0 && len(cur.SkippedUnits) == 0 {
			continue
		}
		if !reflect.DeepEqual(a, b) {
			return f, apierr.UserInput(fmt.Sprintf("%s of a Release never changes: only Labels, Annotations, DeleteGates, LiveStatus and Permissions can", name),
				apierr.Item{Item: name, Description: "cannot change"})
		}
	}
	return f, nil
}

// AdjustEvent: a publish is release.published, carrying what a consumer pulling bundles needs.
func (strategy) AdjustEvent(r Release, e event.Event) event.Event {
	if e.EventType != "release.created" {
		return e
	}
	var spaceSlug string
	if p, ok := e.Payload.(event.EntityPayload); ok {
		spaceSlug = p.SpaceSlug
	}
	return releaseEvent(e, "release.published", r, spaceSlug)
}

// releaseEvent makes e, a change event of r, the event eventType (release.published, release.withdrawn)
// carrying what a consumer pulling bundles needs.
func releaseEvent(e event.Event, eventType string, r Release, spaceSlug string) event.Event {
	e.EventType = eventType
	e.TargetID = &r.TargetID
	e.Payload = PublishedPayload{EntityType: EntityType, EntityID: r.ID, ReleaseID: r.ID, ReleaseNum: r.ReleaseNum, SpaceID: r.SpaceID,
		SpaceSlug: spaceSlug, Digest: r.Digest, BundleBaseName: r.BundleBaseName}
	return e
}

// PublishedPayload is the payload of release.published and release.withdrawn.
type PublishedPayload struct {
	EntityType     string
	EntityID       uuid.UUID
	ReleaseID      uuid.UUID
	ReleaseNum     int64
	SpaceID        uuid.UUID
	SpaceSlug      string
	Digest         string
	BundleBaseName string
}

// GateRefusal is a publish refused by the gates of bundled Units: nothing is stored.
type GateRefusal struct {
	Gates []Gate
}

// Gate is one gate a publish evaluated.
type Gate struct {
	UnitID   uuid.UUID
	UnitSlug string
	Gate     string
	Blocking bool
}

func (g *GateRefusal) Error() string {
	for _, x := range g.Gates {
		if x.Blocking {
			return fmt.Sprintf("the publish is refused: Unit %s has the apply gate %s (and %d gates in all)", x.UnitSlug, x.Gate, len(g.Gates))
		}
	}
	return "the publish is refused by gates"
}

// Refusal is the standard error of a GateRefusal.
func (g *GateRefusal) Refusal() *apierr.Error { return apierr.Unprocessable("%s", g.Error()) }

// publish resolves the Target and Tag, reads the Units of the Space assigned to the Target (locked, so
// that their LastReleasedRevisionNum is set from what was read), checks Edit on each and their gates, and
// builds the bundle.
func publish(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, f Fields) (Fields, error) {
	if f.TargetID == uuid.Nil {
		return f, apierr.UserInput("TargetID is required", apierr.Item{Item: "TargetID", Description: "required"})
	}
	found, err := target.Existing(ctx, sc, tx.Q, []uuid.UUID{f.TargetID})
	if err != nil {
		return f, err
	}
	if !found[f.TargetID] {
		return f, apierr.Validation(fmt.Sprintf("TargetID: no Target %s in your organization", f.TargetID),
			apierr.Item{Item: "TargetID", Description: "no such Target"})
	}
	tagID := ""
	if f.TagID != nil {
		t, err := tag.LookupForShare(ctx, sc, tx.Q, *f.TagID)
		if apierr.Is(err, apierr.TypeValidation) {
			return f, apierr.Validation(fmt.Sprintf("TagID: no Tag %s in your organization", f.TagID),
				apierr.Item{Item: "TagID", Description: "no such Tag"})
		}
		if err != nil {
			return f, err
		}
		if t.SpaceID != spaceID {
			return f, apierr.Validation(fmt.Sprintf("TagID: Tag %s is not of this Space", t.ID),
				apierr.Item{Item: "TagID", Description: "not a Tag of the Release's Space"})
		}
		tagID = f.TagID.String()
	}
	if err := checkChangeOrder(ctx, tx, sc, spaceID, f.ChangeOrderID); err != nil {
		return f, err
	}
	if f.BundleBaseName == "" {
		f.BundleBaseName = spaceID.String()
	}
	if err := tx.Q.ReleaseLockSpace(ctx, spaceID); err != nil {
		return f, err
	}
	if f.ReleaseNum, err = tx.Q.ReleaseNextNum(ctx, spaceID); err != nil {
		return f, err
	}
	units, err := tx.Q.ReleaseUnits(ctx, db.ReleaseUnitsParams{OrganizationID: sc.OrganizationID, SpaceID: spaceID, TargetID: &f.TargetID, TagID: tagID})
	if err != nil {
		return f, err
	}
	p := &publication{}
	var files []File
	var gates []Gate
	blocked := false
	f.SkippedUnits = []SkippedUnit{}
	for _, u := range units {
		switch {
		case u.RevisionNum == 0 && tagID != "":
			f.SkippedUnits = append(f.SkippedUnits, SkippedUnit{UnitID: u.UnitID, Slug: u.Slug, Reason: "no Revision carries the Tag"})
			continue
		case u.RevisionNum == 0 || len(u.Data) == 0:
			f.SkippedUnits = append(f.SkippedUnits, SkippedUnit{UnitID: u.UnitID, Slug: u.Slug, Reason: "no data"})
			continue
		}
		grants, err := store.DecodeJSON[authz.Grants](u.Permissions)
		if err != nil {
			return f, err
		}
		if err := authz.Check(sc, authz.Edit, authz.Target{EntityType: "Unit", ID: u.UnitID.String(), Grants: grants, SpaceID: spaceID}); err != nil {
			return f, err
		}
		applyGates, err := store.DecodeJSON[map[string]bool](u.ApplyGates)
		if err != nil {
			return f, err
		}
		for name := range applyGates {
			gates = append(gates, Gate{UnitID: u.UnitID, UnitSlug: u.Slug, Gate: name, Blocking: true})
			blocked = true
		}
		files = append(files, File{Name: u.Slug + "." + Extension(u.ToolchainType), Data: u.Data})
		p.unitIDs = append(p.unitIDs, u.UnitID)
		p.revisionIDs = append(p.revisionIDs, u.RevisionID)
		p.revNums = append(p.revNums, u.RevisionNum)
	}
	if blocked {
		return f, &GateRefusal{Gates: gates}
	}
	if p.bundle, err = Build(f.BundleBaseName, files); err != nil {
		return f, err
	}
	if p.revisionIDs == nil {
		p.revisionIDs, p.unitIDs, p.revNums = []uuid.UUID{}, []uuid.UUID{}, []int64{}
	}
	f.UserID = sc.UserID
	f.Digest, f.ManifestDigest = p.bundle.Digest.String(), p.bundle.ManifestDigest.String()
	f.DataSize, f.UnitCount, f.Published = int64(len(p.bundle.Tarball)), int64(len(files)), true
	f.published = p
	return f, nil
}

// checkChangeOrder checks the ChangeOrder a publish names (nil: none), locking it for AfterWrite to record
// the publish (changeorder.ForRelease: 400 naming ChangeOrderID), and the ChangeWorkflow policy of the
// Component whose Variant the Space is: 422 naming ChangeOrderID when the publish uses no ChangeWorkflow (no
// ChangeOrder, or one without ChangeWorkflowID) and the Component requires one, or one it does not allow.
func checkChangeOrder(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, id *uuid.UUID) error {
	var workflow *uuid.UUID
	if id != nil {
		co, err := changeorder.ForRelease(ctx, sc, tx, spaceID, *id, "ChangeOrderID")
		if err != nil {
			return err
		}
		workflow = co.ChangeWorkflowID
	}
	policies, err := component.PolicyForSpaces(ctx, tx.Q, sc.OrganizationID, []uuid.UUID{spaceID})
	if err != nil {
		return err
	}
	pol, ok := policies[spaceID]
	if !ok {
		return nil
	}
	if allowed, why := pol.Allows(workflow); !allowed {
		e := apierr.Unprocessable("ChangeOrderID: the publish breaks the ChangeWorkflow policy of Component %s, whose Variant the Space is: name a ChangeOrder whose ChangeWorkflow the Component allows", pol.Slug)
		e.Items = []apierr.Item{{Item: "ChangeOrderID", Description: "the Space is " + why}}
		return e
	}
	return nil
}

// AfterWrite: a publish naming a ChangeOrder records it there (changeorder.RecordRelease: ReleasedSpaceIDs,
// and Resolved → Released once every Space it resolved is released), in the publish's transaction.
func (strategy) AfterWrite(ctx context.Context, _ entity.Deps, tx *store.Tx, sc authz.Scope, before *Release, after Release) (Release, error) {
	if before != nil || after.ChangeOrderID == nil {
		return after, nil
	}
	co, err := changeorder.LockForPromote(ctx, sc, tx, *after.ChangeOrderID)
	if err != nil {
		return after, err
	}
	_, err = changeorder.RecordRelease(ctx, tx, co, after.SpaceID)
	return after, err
}

// Withdraw takes a Release out of service (Published false) and emits release.withdrawn; it stays
// readable. Withdrawing a withdrawn Release changes nothing. It needs Edit on it.
func Withdraw(ctx context.Context, st *store.Store, sc authz.Scope, spaceID uuid.UUID, ref string, dryRun bool) (Release, error) {
	var out Release
	err := st.WithTx(ctx, store.TxOptions{DryRun: dryRun}, func(tx *store.Tx) error {
		cur, err := Family.Resolve(ctx, sc, tx, spaceID, ref, true)
		if err != nil {
			return err
		}
		if err := authz.Check(sc, authz.Edit, cur.Target()); err != nil {
			return err
		}
		if !cur.Published {
			out = cur
			return nil
		}
		row, err := tx.Q.ReleaseWithdraw(ctx, db.ReleaseWithdrawParams{OrganizationID: sc.OrganizationID, ReleaseID: cur.ID})
		if err != nil {
			return err
		}
		if out, err = fromRow(row); err != nil {
			return err
		}
		p, err := space.Of(ctx, sc, tx.Q, out.SpaceID)
		if err != nil {
			return err
		}
		ev := entity.ChangeEvent("release", EntityType, entity.Updated, sc.OrganizationID, out.ID, "", out.Version, &p.Ref)
		tx.Emit(releaseEvent(ev, "release.withdrawn", out, p.Ref.Slug))
		return nil
	})
	return out, err
}

// Tarball returns the bundle of a Release (read by the caller, who may view it).
func Tarball(ctx context.Context, q *db.Queries, r Release) ([]byte, error) {
	return q.ReleaseBundleData(ctx, r.Digest)
}

// NamingRevisions returns, by Revision among revisionIDs, the IDs of the organization's Releases that
// bundled it, oldest first (at most 10,000 for all of them): what a page of Revisions' include=Releases
// expands. Whether the caller may view each is for the reader of the Releases to decide.
func NamingRevisions(ctx context.Context, c store.Conn, sc authz.Scope, revisionIDs []uuid.UUID) (map[uuid.UUID][]uuid.UUID, error) {
	rows, err := c.Queries().ReleasesNamingRevisions(ctx, db.ReleasesNamingRevisionsParams{
		OrganizationID: sc.OrganizationID, RevisionIDs: revisionIDs})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID][]uuid.UUID, len(revisionIDs))
	for _, r := range rows {
		out[r.RevisionID] = append(out[r.RevisionID], r.ReleaseID)
	}
	return out, nil
}
