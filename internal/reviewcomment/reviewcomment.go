// Package reviewcomment holds the rules of ReviewComments: remarks on a Revision of a Unit, optionally
// about one path of its data, and replies to them. Only the Text changes after creation, and only its
// author changes it; its author, or a caller who may Manage its Space, deletes it.
package reviewcomment

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/entity"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/space"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/unit"
)

// EntityType is the ReviewComment's type name.
const EntityType = "ReviewComment"

// ReviewComment is a stored ReviewComment.
type ReviewComment struct {
	entity.Object
	Fields
	// UserID is its author; UserAgent what the author's client called itself.
	UserID    uuid.UUID
	UserAgent string
}

// Fields are what a create sets; an update changes only Text. UnitID and UserAgent come from the request,
// not the body.
type Fields struct {
	entity.Common
	UnitID      uuid.UUID  `json:"-"`
	UserAgent   string     `json:"-"`
	RevisionID  *uuid.UUID `json:"RevisionID"`
	RevisionNum int64      `json:"RevisionNum"`
	Path        string     `json:"Path"`
	Text        string     `json:"Text"`
	ReplyToID   *uuid.UUID `json:"ReplyToID"`
}

func fromRow(r *db.ReviewComment) (ReviewComment, error) {
	revisionID := r.RevisionID
	return ReviewComment{
		Object: entity.Object{ID: r.ReviewCommentID, OrganizationID: r.OrganizationID, SpaceID: r.SpaceID, HiddenReason: r.HiddenReason,
			Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt},
		Fields: Fields{UnitID: r.UnitID, UserAgent: r.UserAgent, RevisionID: &revisionID, RevisionNum: r.RevisionNum, Path: r.Path,
			Text: r.Text, ReplyToID: r.ReplyToID},
		UserID: r.UserID, UserAgent: r.UserAgent,
	}, nil
}

// ListEntity is how ReviewComments are listed (indexes: migration 000036).
var ListEntity = listquery.Standard{Table: "review_comment", ID: "ReviewCommentID", InSpace: true, Record: true}.Define(&listquery.Entity{
	Name:          EntityType,
	ContainsAttrs: []string{"Path", "Text"},
	Attributes: []listquery.Attribute{
		{Name: "UnitID", Type: listquery.UUID, SQL: "review_comment.unit_id", Filterable: true, Orderable: true},
		{Name: "RevisionID", Type: listquery.UUID, SQL: "review_comment.revision_id", Filterable: true, Orderable: true},
		{Name: "RevisionNum", Type: listquery.Int, SQL: "review_comment.revision_num", Filterable: true, Orderable: true},
		{Name: "Path", Type: listquery.String, SQL: "review_comment.path", Filterable: true, Orderable: true},
		listquery.NullableUUID("ReplyToID", "review_comment.reply_to_id"),
		{Name: "UserID", Type: listquery.UUID, SQL: "review_comment.user_id", Filterable: true, Orderable: true},
		{Name: "UserAgent", Type: listquery.String, SQL: "review_comment.user_agent", Filterable: true, Orderable: true},
		{Name: "Text", Type: listquery.Opaque},
		{Name: "UpdatedAt", Type: listquery.Time, SQL: "review_comment.updated_at", Filterable: true, Orderable: true},
		{Name: "Version", Type: listquery.Opaque},
	},
	Includes: []listquery.Include{{Name: "UnitID", Field: "Unit", Type: unit.EntityType}, {Name: "RevisionID", Field: "Revision", Type: unit.RevisionEntityType}},
})

// Family declares ReviewComments to the entity kit: a ReviewComment lives in its Unit's Space and carries
// no Permissions (the role and the Space's grants decide, as for the Unit's other records).
var Family = entity.Declare(&entity.Family[db.ReviewComment, ReviewComment, Fields]{
	Type: EntityType, Event: "review_comment", Listing: ListEntity, Parent: space.Of, Quiet: true, Strategy: strategy{},
	InsertRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, spaceID, id uuid.UUID, f Fields) (*db.ReviewComment, error) {
		return q.ReviewCommentInsert(ctx, db.ReviewCommentInsertParams{ReviewCommentID: id, OrganizationID: sc.OrganizationID, SpaceID: spaceID,
			UnitID: f.UnitID, RevisionID: *f.RevisionID, RevisionNum: f.RevisionNum, Path: f.Path, Text: f.Text, ReplyToID: f.ReplyToID,
			UserID: sc.UserID, UserAgent: f.UserAgent})
	},
	UpdateRow: func(ctx context.Context, q *db.Queries, sc authz.Scope, cur ReviewComment, f Fields) (*db.ReviewComment, error) {
		return q.ReviewCommentUpdate(ctx, db.ReviewCommentUpdateParams{OrganizationID: sc.OrganizationID, ReviewCommentID: cur.ID,
			Version: cur.Version, Text: f.Text})
	},
	FromRow: fromRow,
})

type strategy struct{}

// maxText bounds a remark (the document says so too; this holds for every path in).
const maxText = 16384

// Normalize keeps none of the common fields (a ReviewComment has no Slug, Labels or Permissions) and
// checks what needs no database.
func (strategy) Normalize(f Fields) (Fields, error) {
	f.Common = entity.Common{}
	if f.Text == "" {
		return f, apierr.UserInput("Text is required", apierr.Item{Item: "Text", Description: "required"})
	}
	if len(f.Text) > maxText {
		return f, apierr.UserInput(fmt.Sprintf("Text is longer than %d bytes", maxText), apierr.Item{Item: "Text", Description: "too long"})
	}
	if f.RevisionNum < 0 {
		return f, apierr.UserInput("RevisionNum must not be negative", apierr.Item{Item: "RevisionNum", Description: "negative"})
	}
	return f, nil
}

// Check makes a create name a Revision and a ReviewComment of its own Unit (anything else, of another
// Unit, Space or organization, or one that does not exist, is the same 400), and lets only the author
// change the Text, and nothing else change.
func (strategy) Check(ctx context.Context, tx *store.Tx, sc authz.Scope, spaceID uuid.UUID, cur *ReviewComment, f Fields) (Fields, error) {
	if cur != nil {
		return checkUpdate(sc, *cur, f)
	}
	if _, err := unit.Family.Resolve(ctx, sc, tx, spaceID, f.UnitID.String(), false); err != nil {
		return f, err
	}
	if f.RevisionID == nil && f.RevisionNum == 0 {
		return f, apierr.UserInput("name the Revision commented on by RevisionID or RevisionNum",
			apierr.Item{Item: "RevisionID", Description: "required"})
	}
	var rev *db.Revision
	var err error
	if f.RevisionID != nil {
		rev, err = tx.Q.RevisionGet(ctx, db.RevisionGetParams{OrganizationID: sc.OrganizationID, UnitID: f.UnitID, RevisionID: *f.RevisionID})
	} else {
		rev, err = tx.Q.RevisionGetByNum(ctx, db.RevisionGetByNumParams{OrganizationID: sc.OrganizationID, UnitID: f.UnitID, RevisionNum: f.RevisionNum})
	}
	if apierr.Is(err, apierr.TypeNotFound) {
		field, ref := "RevisionNum", fmt.Sprint(f.RevisionNum)
		if f.RevisionID != nil {
			field, ref = "RevisionID", f.RevisionID.String()
		}
		return f, apierr.Validation(fmt.Sprintf("%s: %s is not a Revision of the Unit", field, ref),
			apierr.Item{Item: field, Description: "not a Revision of the Unit"})
	}
	if err != nil {
		return f, err
	}
	if f.RevisionID != nil && f.RevisionNum != 0 && f.RevisionNum != rev.RevisionNum {
		return f, apierr.Validation(fmt.Sprintf("RevisionNum %d is not Revision %s's number (%d)", f.RevisionNum, rev.RevisionID, rev.RevisionNum),
			apierr.Item{Item: "RevisionNum", Description: "does not match RevisionID"})
	}
	f.RevisionID, f.RevisionNum = &rev.RevisionID, rev.RevisionNum
	if f.ReplyToID != nil {
		of, err := tx.Q.ReviewCommentUnitOf(ctx, db.ReviewCommentUnitOfParams{OrganizationID: sc.OrganizationID, ReviewCommentID: *f.ReplyToID})
		if apierr.Is(err, apierr.TypeNotFound) || (err == nil && of != f.UnitID) {
			return f, apierr.Validation(fmt.Sprintf("ReplyToID: %s is not a ReviewComment on this Unit", f.ReplyToID),
				apierr.Item{Item: "ReplyToID", Description: "not a ReviewComment on the Unit"})
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// checkUpdate lets only the author change a ReviewComment: another's words are not theirs to reword,
// whatever their role. Fields other than Text sent back unchanged (or left out) are ignored; a change
// of one is 400 naming it.
func checkUpdate(sc authz.Scope, cur ReviewComment, f Fields) (Fields, error) {
	if cur.UserID != sc.UserID {
		return f, apierr.Forbidden("only the author of ReviewComment %s may change it", cur.ID)
	}
	changed := func(field string) error {
		return apierr.UserInput(fmt.Sprintf("%s cannot change: only the Text of a ReviewComment does", field),
			apierr.Item{Item: field, Description: "cannot change"})
	}
	switch {
	case f.RevisionID != nil && *f.RevisionID != *cur.RevisionID:
		return f, changed("RevisionID")
	case f.RevisionNum != 0 && f.RevisionNum != cur.RevisionNum:
		return f, changed("RevisionNum")
	case f.Path != "" && f.Path != cur.Path:
		return f, changed("Path")
	case f.ReplyToID != nil && (cur.ReplyToID == nil || *f.ReplyToID != *cur.ReplyToID):
		return f, changed("ReplyToID")
	}
	text := f.Text
	f = cur.Fields
	f.Text = text
	return f, nil
}

// BeforeDelete lets the author delete a ReviewComment, and a caller who may Manage its Space (a
// moderator); anyone else is refused.
func (strategy) BeforeDelete(ctx context.Context, tx *store.Tx, sc authz.Scope, cur ReviewComment) error {
	if cur.UserID == sc.UserID {
		return nil
	}
	p, err := space.Of(ctx, sc, tx.Q, cur.SpaceID)
	if err != nil {
		return err
	}
	if authz.Check(sc, authz.Manage, p.Target) != nil {
		return apierr.Forbidden("only the author of ReviewComment %s, or one who may Manage its Space, may delete it", cur.ID)
	}
	return nil
}
