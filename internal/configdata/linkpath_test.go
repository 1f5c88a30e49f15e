package configdata

import "testing"

func TestPairLinkPaths(t *testing.T) {
	up := []NamedPath{{Path: "a"}, {Name: "n", Path: "b"}, {Path: "c"}}
	pairs, err := PairLinkPaths(up, []PathExpression{{Path: "x"}, {Name: "n", Path: "y"}, {Path: "z"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []LinkPair{{0, 0}, {1, 1}, {2, 2}}
	for i := range want {
		if pairs[i] != want[i] {
			t.Fatalf("pairs %v, want %v", pairs, want)
		}
	}
	for _, c := range []struct {
		up    []NamedPath
		down  []PathExpression
		field string
	}{
		{up, []PathExpression{{Path: "x"}, {Name: "n", Path: "y"}}, "UpstreamPaths.2"},
		{up, []PathExpression{{Path: "x"}, {Path: "y"}, {Path: "z"}}, "DownstreamPaths.2"},
		{up, []PathExpression{{Path: "x"}, {Name: "m", Path: "y"}, {Path: "z"}}, "DownstreamPaths.1.Name"},
		{[]NamedPath{{Name: "n"}, {Name: "n"}}, nil, "UpstreamPaths.1.Name"},
		{[]NamedPath{{Name: "n"}}, nil, "UpstreamPaths.0.Name"},
	} {
		_, err := PairLinkPaths(c.up, c.down)
		pe, ok := err.(*PairError)
		if !ok || pe.Field != c.field {
			t.Errorf("PairLinkPaths(%v, %v) = %v, want an error naming %s", c.up, c.down, err, c.field)
		}
	}
}
