// Package tag holds the rules of Tags: named markers in a Space that are put on Revisions of Units.
// A Revision's Tags map holds the TagIDs on it; deleting a Tag takes it off every Revision.
package tag

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
)

// EntityType is the Tag's type name.
const EntityType = "Tag"

// Tag is a stored Tag.
type Tag struct {
	entity.Object
	Fields
	// ChangeOrderID is the ChangeOrder the Tag was made for (read-only; null once that ChangeOrder is deleted).
	ChangeOrderID *uuid.UUID
	// ChangeSetID names the ChangeSet whose start or end Tag this is (nil for other Tags); set when it is made.
	ChangeSetID *uuid.UUID
}

// Fields are what a write sets: a Tag has only the fields every entity has.
type Fields struct {
	entity.Common
}

func fromRow(r *db.Tag) (Tag, error) {
	c, err := entity.DecodeCommon(r.Slug, r.DisplayName, r.Labels, r.Annotations, r.DeleteGates, nil)
	return Tag{Object: entity.Object{ID: r.TagID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, Fields: Fields{Common: c}, ChangeOrderID: r.ChangeOrderID,
		ChangeSetID: r.ChangeSetID}, err
}

// ListEntity is how Tags are listed.
var ListEntity = listquery.Standard{Table: "tag", ID: "TagID", InSpace: true, Unordered: []string{"DisplayName", "HiddenReason", "UpdatedAt"}}.Define(&listquery.Entity{
	Name: EntityType,
	Attributes: []listquery.Attribute{
		listquery.After("UpdatedAt"),
		{Name: "ChangeOrderID", Type: listquery.UUID, SQL: "tag.change_order_id", Nullable: true, Filterable: true},
		listquery.NullableUUID("ChangeSetID", "tag.change_set_id"),
		{Name: "ReleaseID", Type: listquery.Opaque},
	},
})

// Family declares Tags to the entity kit: a Tag lives in a Space, carries no Permissions (the role and
// its Space's grants decide), and is taken off every Revision when it is deleted.
var Family = entity.Declare(&entity.Family[db.Tag, Tag, Fields]{
	Type: EntityType, Event: "tag", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.Tag, error) {
		return q.TagInsert(ctx, db.TagInsertParams{TagID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates)})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur Tag, f Fields) (*db.Tag, error) {
		return q.TagUpdate(ctx, db.TagUpdateParams{OrganizationID: sc.OrganizationID, TagID: cur.ID, Version: cur.Version,
			Slug: f.Slug, DisplayName: f.DisplayName, Labels: store.EncodeJSON(f.Labels), Annotations: store.EncodeJSON(f.Annotations),
			DeleteGates: store.EncodeJSON(f.DeleteGates)})
	},
	FromRow: fromRow,
})

type strategy struct{}

// BeforeDelete takes a deleted Tag off every Revision it was on.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur Tag) error {
	return tx.Q.TagRemoveFromRevisions(ctx, db.TagRemoveFromRevisionsParams{OrganizationID: sc.OrganizationID, TagID: cur.ID.String()})
}

// LookupForShare returns a Tag of the caller's organization by ID, in any Space, and holds a share lock
// on it until the transaction of q ends: a write putting the Tag on Revisions reads it this way, so a
// concurrent Delete (which takes the Tag off every Revision) waits for it rather than missing its Revisions.
func LookupForShare(ctx context.Context, sc authz.Scope, q *db.Queries, id uuid.UUID) (Tag, error) {
	row, err := q.TagGetInOrganizationForShare(ctx, db.TagGetInOrganizationForShareParams{OrganizationID: sc.OrganizationID, TagID: id})
	if apierr.Is(err, apierr.TypeNotFound) {
		return Tag{}, apierr.Validation("Tag "+id.String()+" does not exist in your organization", apierr.Item{Item: "TagID", Description: "no such Tag"})
	}
	if err != nil {
		return Tag{}, err
	}
	return fromRow(row)
}

// maxSlugTries bounds the suffixes CreateOwned tries (-2, -3...) before giving up.
const maxSlugTries = 100

// Owner is the entity a Tag is made for (its start or end Tag): one of ChangeOrderID and ChangeSetID.
type Owner struct {
	ChangeOrderID, ChangeSetID *uuid.UUID
}

// CreateOwned makes, in tx, a Tag of Space spaceID for its owner, named slug or, while that is taken in the
// Space, slug-2, slug-3...; it emits tag.created. It is part of the owner's write, whatever the caller may
// do with Tags.
func CreateOwned(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, slug string, owner Owner) (Tag, error) {
	p, err := space.Of(ctx, sc, tx.Q, spaceID)
	if err != nil {
		return Tag{}, err
	}
	for i := 1; i <= maxSlugTries; i++ {
		name := slug
		if i > 1 {
			name = fmt.Sprintf("%s-%d", slug, i)
		}
		var row *db.Tag
		err := tx.Savepoint(ctx, func(sp *store.Tx) error {
			var err error
			row, err = sp.Q.TagInsert(ctx, db.TagInsertParams{TagID: uuid.New(), OrganizationID: sc.OrganizationID, SpaceID: spaceID,
				Slug: name, Labels: []byte("{}"), Annotations: []byte("{}"), DeleteGates: []byte("{}"),
				ChangeOrderID: owner.ChangeOrderID, ChangeSetID: owner.ChangeSetID})
			return err
		})
		if apierr.Is(err, apierr.TypeAlreadyExists) {
			continue
		}
		if err != nil {
			return Tag{}, fmt.Errorf("creating Tag %s: %w", name, err)
		}
		t, err := fromRow(row)
		if err != nil {
			return t, err
		}
		tx.Emit(entity.ChangeEvent(Family.Event, EntityType, entity.Created, sc.OrganizationID, t.ID, t.Slug, t.Version, &p.Ref))
		return t, nil
	}
	return Tag{}, apierr.AlreadyExists(EntityType, slug)
}

// SlugFor is the Slug of a Tag named after an entity's Slug with suffix ("-start"), shortened so that it
// stays a valid Slug with the "-NNN" CreateOwned may add.
func SlugFor(base, suffix string) string {
	const room = 128 - len("-100")
	if len(base)+len(suffix) > room {
		base = base[:room-len(suffix)]
	}
	for len(base) > 0 && (base[len(base)-1] == '-' || base[len(base)-1] == '_' || base[len(base)-1] == '.') {
		base = base[:len(base)-1]
	}
	return fmt.Sprintf("%s%s", base, suffix)
}

// PutOnRevisions puts Tag id on the Revisions revisionIDs of the caller's organization, in the transaction
// of q, share-locking the Tag first (as a bulk tag does, so a concurrent delete of the Tag waits). A Tag
// that no longer exists tags nothing: ok is false.
func PutOnRevisions(ctx context.Context, q *db.Queries, sc authz.Scope, id uuid.UUID, revisionIDs []uuid.UUID) (ok bool, err error) {
	if _, err := q.TagGetInOrganizationForShare(ctx, db.TagGetInOrganizationForShareParams{OrganizationID: sc.OrganizationID, TagID: id}); err != nil {
		if apierr.Is(err, apierr.TypeNotFound) {
			return false, nil
		}
		return false, err
	}
	if len(revisionIDs) == 0 {
		return true, nil
	}
	return true, q.TagPutOnRevisions(ctx, db.TagPutOnRevisionsParams{OrganizationID: sc.OrganizationID, TagID: id.String(),
		TaggedAt: time.Now().UTC().Format(time.RFC3339Nano), RevisionIDs: revisionIDs})
}
