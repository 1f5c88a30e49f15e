package unit

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
	"github.com/hubd/hubd/internal/tag"
)

// RevisionSelector names one Revision of each Unit a bulk write selects: HeadRevisionNum, a RevisionNum,
// LastReleasedRevisionNum, Tag:<slug or ID>, Revision:<ID>, ChangeSet:<ID>, or Before:<selector>.
type RevisionSelector struct {
	kind   string // "head", "num", "released", "tag", "revision", "changeset"
	num    int64
	ref    string // the Tag's slug or ID
	id     uuid.UUID
	before int    // how many Revisions before the one selected
	field  string // what carried it, named by errors about the Revision it selects
}

// maxBefore bounds the Before: prefixes one selector may stack.
const maxBefore = 100

// ParseRevisionSelector reads a selector; "" is HeadRevisionNum. A malformed one is 400 UserInput naming
// field, so a mistyped selector fails the whole request before any Unit is touched.
func ParseRevisionSelector(field, s string) (RevisionSelector, error) {
	in := s
	sel := RevisionSelector{field: field}
	for strings.HasPrefix(s, "Before:") {
		s = strings.TrimPrefix(s, "Before:")
		sel.before++
	}
	bad := func(why string) (RevisionSelector, error) {
		return RevisionSelector{}, apierr.UserInput(fmt.Sprintf("%s %q: %s", field, in, why), apierr.Item{Item: field, Description: why})
	}
	if sel.before > maxBefore {
		return bad(fmt.Sprintf("at most %d Before: prefixes", maxBefore))
	}
	switch {
	case s == "HeadRevisionNum" || (s == "" && sel.before == 0):
		sel.kind = "head"
	case s == "LastReleasedRevisionNum":
		sel.kind = "released"
	case strings.HasPrefix(s, "Tag:"):
		sel.kind, sel.ref = "tag", strings.TrimPrefix(s, "Tag:")
		if sel.ref == "" {
			return bad("Tag: must be followed by a Tag's slug or ID")
		}
	case strings.HasPrefix(s, "Revision:"), strings.HasPrefix(s, "ChangeSet:"):
		prefix, rest, _ := strings.Cut(s, ":")
		id, err := uuid.Parse(rest)
		if err != nil {
			return bad(prefix + ": must be followed by an ID")
		}
		sel.kind, sel.id = strings.ToLower(prefix), id
	default:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return bad("not a revision selector: use HeadRevisionNum, LastReleasedRevisionNum, a RevisionNum from 1, " +
				"Tag:<slug or ID>, Revision:<ID> or ChangeSet:<ID>, optionally prefixed Before:, or Remove")
		}
		sel.kind, sel.num = "num", n
	}
	return sel, nil
}

// resolve finds the selected Revision of u (read in tx); none is a Validation error about this Unit alone.
func (sel RevisionSelector) resolve(ctx context.Context, sc authz.Scope, tx *store.Tx, u Unit) (*db.Revision, error) {
	if sel.field == "" {
		sel.field = "Revision"
	}
	var num int64
	switch sel.kind {
	case "head", "":
		if u.HeadRevisionNum == 0 {
			return nil, apierr.Validation(fmt.Sprintf("Unit %s has no Revision yet; put its data first", u.Slug),
				apierr.Item{Item: sel.field, Description: "no Revision yet"})
		}
		num = u.HeadRevisionNum
	case "num":
		num = sel.num
	case "released":
		// Set by publishing a Release; a Unit never released has none.
		if u.LastReleasedRevisionNum == 0 {
			return nil, apierr.Validation(fmt.Sprintf("Unit %s has never been released: it has no LastReleasedRevisionNum", u.Slug),
				apierr.Item{Item: sel.field, Description: "never released"})
		}
		num = u.LastReleasedRevisionNum
	case "changeset":
		// The newest Revision recorded with the ChangeSet; another organization's records none here, so it
		// is refused as a random ID is.
		r, err := tx.Q.RevisionNewestInChangeSet(ctx, db.RevisionNewestInChangeSetParams{OrganizationID: sc.OrganizationID, UnitID: u.ID, ChangeSetID: &sel.id})
		if apierr.Is(err, apierr.TypeNotFound) {
			return nil, apierr.Validation(fmt.Sprintf("no Revision of Unit %s was recorded with ChangeSet %s", u.Slug, sel.id),
				apierr.Item{Item: sel.field, Description: "no Revision in the ChangeSet"})
		}
		if err != nil {
			return nil, err
		}
		num = r.RevisionNum
	case "revision":
		r, err := tx.Q.RevisionGet(ctx, db.RevisionGetParams{OrganizationID: sc.OrganizationID, UnitID: u.ID, RevisionID: sel.id})
		if apierr.Is(err, apierr.TypeNotFound) {
			return nil, apierr.Validation(fmt.Sprintf("Revision %s is not a Revision of Unit %s", sel.id, u.Slug),
				apierr.Item{Item: sel.field, Description: "not a Revision of the Unit"})
		}
		if err != nil {
			return nil, err
		}
		num = r.RevisionNum
	case "tag":
		tagID, err := sel.tagID(ctx, sc, tx, u)
		if err != nil {
			return nil, err
		}
		r, err := tx.Q.RevisionNewestWithTag(ctx, db.RevisionNewestWithTagParams{OrganizationID: sc.OrganizationID, UnitID: u.ID, TagID: tagID.String()})
		if apierr.Is(err, apierr.TypeNotFound) {
			return nil, apierr.Validation(fmt.Sprintf("no Revision of Unit %s carries Tag %s", u.Slug, sel.ref),
				apierr.Item{Item: sel.field, Description: "no Revision carries the Tag"})
		}
		if err != nil {
			return nil, err
		}
		num = r.RevisionNum
	}
	if num-int64(sel.before) < 1 {
		return nil, apierr.Validation(fmt.Sprintf("Unit %s has no Revision before Revision %d", u.Slug, num-int64(sel.before)+1),
			apierr.Item{Item: sel.field, Description: "no earlier Revision"})
	}
	num -= int64(sel.before)
	r, err := tx.Q.RevisionGetByNum(ctx, db.RevisionGetByNumParams{OrganizationID: sc.OrganizationID, UnitID: u.ID, RevisionNum: num})
	if apierr.Is(err, apierr.TypeNotFound) {
		return nil, apierr.Validation(fmt.Sprintf("Unit %s has no Revision %d (its head is %d)", u.Slug, num, u.HeadRevisionNum),
			apierr.Item{Item: sel.field, Description: "no such Revision"})
	}
	return r, err
}

// tagID finds the Tag a Tag: selector names: an ID names a Tag of the organization, a slug one of the
// Unit's Space.
func (sel RevisionSelector) tagID(ctx context.Context, sc authz.Scope, tx *store.Tx, u Unit) (uuid.UUID, error) {
	if id, err := uuid.Parse(sel.ref); err == nil {
		return id, nil
	}
	t, err := tag.Family.Resolve(ctx, sc, tx, u.SpaceID, sel.ref, false)
	if apierr.Is(err, apierr.TypeNotFound) {
		return uuid.Nil, apierr.Validation(fmt.Sprintf("no Tag %q in the Space of Unit %s", sel.ref, u.Slug),
			apierr.Item{Item: sel.field, Description: "no such Tag"})
	}
	return t.ID, err
}
