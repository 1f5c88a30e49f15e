package listquery

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hubd/hubd/internal/apierr"
)

func keysOf(m map[string]bool) []string {
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestProjection: select names the fields to return (and always those select cannot drop); include names
// the related entities to expand, and a dotted select names a field of one of them.
func TestProjection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sel, include   string
		fields, expand []string
	}{
		{"", "", nil, []string{}},
		{" , ", "", nil, []string{}},
		{"DisplayName", "", []string{"DisplayName", "Slug", "SpaceID", "WidgetID"}, []string{}},
		{"Size, Permissions", "ParentID", []string{"Permissions", "Size", "Slug", "SpaceID", "WidgetID"}, []string{"ParentID"}},
		{"Parent.Count", "ParentID, SpaceID", []string{"Parent.Count", "Slug", "SpaceID", "WidgetID"}, []string{"ParentID", "SpaceID"}},
		// Space is not registered here: any of its field names is taken as the include expands it.
		{"Space.Anything", "SpaceID", []string{"Slug", "Space.Anything", "SpaceID", "WidgetID"}, []string{"SpaceID"}},
	}
	for _, tt := range tests {
		fields, includes, err := Projection(widget, tt.sel, tt.include)
		require.NoError(t, err, "%q %q", tt.sel, tt.include)
		require.Equal(t, tt.fields, keysOf(fields), "%q", tt.sel)
		require.Equal(t, tt.expand, keysOf(includes), "%q", tt.include)
	}

	refusals := []struct{ sel, include, item, msg string }{
		{"", "Owner", "include", `include: "Owner" is not a related entity of Widget; use one of: ParentID, SpaceID`},
		{"Data", "", "select", "select: Data is not a field"},
		{"Parent.Count", "", "select", "select: Parent.Count is a field of the Parent that include=ParentID expands; add ParentID to include"},
		{"Parent.Nope", "ParentID", "select", `select: "Nope" is not a field of Thing`},
		{"Owner.Slug", "", "select", `select: "Owner.Slug" names no related entity of Widget; a dotted field is <Entity>.<Field> of one that include expands: Parent, Space`},
	}
	for _, tt := range refusals {
		_, _, err := Projection(widget, tt.sel, tt.include)
		e := apierr.From(err)
		require.Equal(t, apierr.TypeUserInput, e.Type, e.Message)
		require.Equal(t, tt.item, e.Items[0].Item)
		require.Contains(t, e.Message, tt.msg)
	}
}

// TestListSelectKeepsWhatTheQueryUses: a list's select also returns the fields its where, contains and
// order_by use, so a client can see why each item was listed and resume in order.
func TestListSelectKeepsWhatTheQueryUses(t *testing.T) {
	t.Parallel()
	p, _, err := widgetQuery(Params{Select: "Size", Where: "Enabled = true", OrderBy: "CreatedAt", Contains: "x"}).plan(widgetCodec)
	require.NoError(t, err)
	require.Equal(t, []string{"CreatedAt", "DisplayName", "Enabled", "Size", "Slug", "SpaceID", "WidgetID"}, keysOf(p.fields))

	p, _, err = widgetQuery(Params{Where: "Enabled = true"}).plan(widgetCodec)
	require.NoError(t, err)
	require.Nil(t, p.fields, "without select, every field")
}

// TestPager: a pager with the client's limit yields that one page and its Continue; without one it
// follows the tokens itself, chunk by chunk, and hands out pages without them.
func TestPager(t *testing.T) {
	t.Parallel()
	var asked []Params
	pages := map[string]Page[int]{
		"":   {Items: []int{1, 2}, PageInfo: PageInfo{Continue: "t1"}},
		"t1": {Items: []int{3}, PageInfo: PageInfo{Continue: "t2"}},
		"t2": {Items: []int{4}},
	}
	fetch := func(p Params) (Page[int], error) {
		asked = append(asked, p)
		return pages[p.Continue], nil
	}

	unlimited := NewPager(Params{Where: "x"}, fetch)
	var got []int
	for {
		page, ok, err := unlimited.Next()
		require.NoError(t, err)
		if !ok {
			break
		}
		require.Empty(t, page.Continue, "the pager consumed the token")
		got = append(got, page.Items...)
	}
	require.Equal(t, []int{1, 2, 3, 4}, got)
	require.Len(t, asked, 3)
	for _, p := range asked {
		require.Equal(t, chunk, *p.Limit)
		require.Equal(t, "x", p.Where)
	}

	asked = nil
	limited := NewPager(Params{Limit: intp(2)}, fetch)
	page, ok, err := limited.Next()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "t1", page.Continue, "the client follows its own token")
	_, ok, err = limited.Next()
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, asked, 1)

	failing := NewPager(Params{}, func(Params) (Page[int], error) { return Page[int]{}, context.DeadlineExceeded })
	_, ok, err = failing.Next()
	require.False(t, ok)
	require.True(t, errors.Is(err, context.DeadlineExceeded))
}

// TestSplitSelect: the names of a select the entity does not know are split off (the HTTP edge ignores
// them with a warning); Data and dotted fields of what an include expands are known.
func TestSplitSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		sel, known string
		unknown    []string
	}{
		{"Size, Slug", "Size, Slug", nil},
		{"", "", nil},
		{"Size,Nope, Slug", "Size,Slug", []string{"Nope"}},
		{"Data,Parent.Count,Space.Anything", "Data,Parent.Count,Space.Anything", nil},
		{"Parent.Nope,Owner.Slug,Size", "Size", []string{"Parent.Nope", "Owner.Slug"}},
	}
	for _, tt := range tests {
		known, unknown := SplitSelect(widget, tt.sel)
		require.Equal(t, tt.known, known, tt.sel)
		require.Equal(t, tt.unknown, unknown, tt.sel)
		_, _, err := Projection(widget, known, "ParentID,SpaceID")
		if !strings.Contains(known, "Data") {
			require.NoError(t, err, "what is known passes select: %q", known)
		}
	}
}
