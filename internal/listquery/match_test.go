package listquery

import "testing"

func TestMatcher(t *testing.T) {
	types := map[string]Type{"Name": String, "Count": Int, "On": Bool}
	attrs := Attributes{"Name": "set-image", "Count": int64(2), "On": true}
	cases := map[string]bool{
		"":                                 true,
		"Name = 'set-image'":               true,
		"Name != 'set-image'":              false,
		"Name LIKE 'set-%' AND Count >= 2": true,
		"Name NOT LIKE 'set-%'":            false,
		"Name ILIKE 'SET-%'":               true,
		"Name ~ '^set'":                    true,
		"Name !~* '^SET'":                  false,
		"Name < 'z' AND Name > 'a'":        true,
		"Count < 2":                        false,
		"Count <= 2 AND Count > 1":         true,
		"Count IN (1, 2)":                  true,
		"Name NOT IN ('set-image', 'x')":   false,
		"On = true":                        true,
		"On != true":                       false,
	}
	for where, want := range cases {
		m, err := CompileMatcher(where, types)
		if err != nil {
			t.Fatalf("%q: %v", where, err)
		}
		if got := m.Match(attrs); got != want {
			t.Errorf("%q: %v, want %v", where, got, want)
		}
	}
	for _, bad := range []string{"Bogus = 1", "Count = 'x'", "On < true", "Name ~ '('", "LEN(Name) > 1", "Name IS NULL"} {
		if _, err := CompileMatcher(bad, types); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
