package listquery

import (
	"encoding/json"
	"testing"
)

func TestArrayLength(t *testing.T) {
	for text, want := range map[string]int{
		`[]`: 0, `[ ]`: 0, `[1]`: 1, `[1, 2, 3]`: 3, `[[]]`: 1, `[{}, []]`: 2,
		`["a,b", {"c": [1, 2]}, "d\"],"]`: 3, `[{"a": "]"}, 2]`: 2,
	} {
		if got := arrayLength(json.RawMessage(text)); got != want {
			t.Errorf("arrayLength(%s) = %d, want %d", text, got, want)
		}
	}
}
