package unit

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/hubd/hubd/gen/db"
	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/configdata"
	"github.com/hubd/hubd/internal/listquery"
	"github.com/hubd/hubd/internal/store"
)

// UnitPager pages through the Units a selection picks (for bulk reads).
func (s *Service) UnitPager(ctx context.Context, sc authz.Scope, path string, params listquery.Params, df DataFilter) *listquery.Pager[Unit] {
	return listquery.NewPager(params, func(p listquery.Params) (listquery.Page[Unit], error) {
		return s.List(ctx, sc, nil, path, p, df)
	})
}

// RevisionPager pages through the Revisions a selection picks (for bulk reads).
func (s *Service) RevisionPager(ctx context.Context, sc authz.Scope, path string, params listquery.Params, all bool) *listquery.Pager[Revision] {
	return listquery.NewPager(params, func(p listquery.Params) (listquery.Page[Revision], error) {
		return s.ListAllRevisions(ctx, sc, path, p, all)
	})
}

// DataByHash loads the data of many hashes in one query.
func (s *Service) DataByHash(ctx context.Context, hashes []string) (map[string][]byte, error) {
	rows, err := s.Store.Q().ConfigDataGetMany(ctx, hashes)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(rows))
	for _, r := range rows {
		out[r.DataHash] = r.Data
	}
	return out, nil
}

// SourcesByRevision loads the mutation sources of many Revisions in one query.
func (s *Service) SourcesByRevision(ctx context.Context, sc authz.Scope, ids []uuid.UUID) (map[uuid.UUID][]Source, error) {
	rows, err := s.Store.Q().RevisionSourcesByIDs(ctx, db.RevisionSourcesByIDsParams{OrganizationID: sc.OrganizationID, RevisionIDs: ids})
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID][]Source, len(rows))
	for _, r := range rows {
		src, err := store.DecodeJSON[[]Source](r.MutationSources)
		if err != nil {
			return nil, err
		}
		if src == nil {
			src = []Source{}
		}
		out[r.RevisionID] = src
	}
	return out, nil
}

// DiffResult is the difference between two Revisions of a Unit.
type DiffResult struct {
	From, To int64
	configdata.Diff
}

// Diff compares two Revisions of a Unit (to defaults to the head, from to the Revision before to;
// Revision 0 is the empty data before the first).
func (s *Service) Diff(ctx context.Context, sc authz.Scope, spaceID, unitID uuid.UUID, from, to *int64) (DiffResult, error) {
	u, err := s.Get(ctx, sc, spaceID, unitID)
	if err != nil {
		return DiffResult{}, err
	}
	return s.diffUnit(ctx, u, from, to)
}

// DiffUnit is Diff for a Unit already read (bulk diffs).
func (s *Service) DiffUnit(ctx context.Context, u Unit, from, to *int64) (DiffResult, error) {
	return s.diffUnit(ctx, u, from, to)
}

func (s *Service) diffUnit(ctx context.Context, u Unit, from, to *int64) (DiffResult, error) {
	res := DiffResult{To: u.HeadRevisionNum}
	if to != nil {
		res.To = *to
	}
	res.From = max(res.To-1, 0)
	if from != nil {
		res.From = *from
	}
	for _, c := range []struct {
		name string
		n    int64
	}{{"to", res.To}, {"from", res.From}} {
		name, n := c.name, c.n
		if n < 0 || n > u.HeadRevisionNum {
			return res, apierr.Validation(fmt.Sprintf("%s names Revision %d; the Unit has Revisions 1 to %d", name, n, u.HeadRevisionNum),
				apierr.Item{Item: name, Description: "no such RevisionNum"})
		}
	}
	fromData, fromDoc, err := s.revisionContent(ctx, u, res.From)
	if err != nil {
		return res, err
	}
	toData, toDoc, err := s.revisionContent(ctx, u, res.To)
	if err != nil {
		return res, err
	}
	res.Diff = configdata.Compare(fromData, toData, fromDoc, toDoc)
	return res, nil
}

// revisionContent is a Revision's data and parsed form (Revision 0: empty).
func (s *Service) revisionContent(ctx context.Context, u Unit, num int64) ([]byte, *configdata.Document, error) {
	if num == 0 {
		return nil, nil, nil
	}
	rev, err := s.Store.Q().RevisionGetByNum(ctx, db.RevisionGetByNumParams{OrganizationID: u.OrganizationID, UnitID: u.ID, RevisionNum: num})
	if err != nil {
		return nil, nil, err
	}
	data, err := s.contents.get(ctx, s.Store.Q(), rev.DataHash)
	if err != nil {
		return nil, nil, err
	}
	doc, err := configdata.Parse(u.ToolchainType, data)
	if err != nil {
		return nil, nil, dataError(err)
	}
	return data, doc, nil
}

// DiffTexts compares two configurations of a ToolchainType.
func DiffTexts(toolchain string, from, to []byte) (configdata.Diff, error) {
	if err := configdata.CheckToolchain(toolchain, "unknown"); err != nil {
		return configdata.Diff{}, err
	}
	fromDoc, err := configdata.Parse(toolchain, from)
	if err != nil {
		return configdata.Diff{}, fieldDataError("From", err)
	}
	toDoc, err := configdata.Parse(toolchain, to)
	if err != nil {
		return configdata.Diff{}, fieldDataError("To", err)
	}
	return configdata.Compare(from, to, fromDoc, toDoc), nil
}

func fieldDataError(field string, err error) error {
	e := apierr.From(dataError(err))
	return e.WithDetail("in %s", field)
}
