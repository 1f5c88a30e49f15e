package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/hubd/hubd/internal/apierr"
)

// checkJSONText refuses a JSON body holding text that is not valid Unicode: bytes that are not UTF-8 or
// \u escapes of lone surrogates, both of which Go's decoder would silently turn into U+FFFD, so the text
// stored would not be the text sent. The error names the field by its dot path. A body that is not JSON
// at all is left to validation to report. (NUL characters are valid Unicode; the store refuses them as
// 400 Data, since PostgreSQL text cannot hold them.)
//
// It also refuses a body nested deeper than maxDepth or holding more than maxValues keys and values:
// validation, pruning of unknown fields and merges cost more than linear time on such bodies, so they
// are refused here, in one pass, before any of that work or any lock.
func checkJSONText(data []byte, maxDepth, maxValues int) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*jsonFrame
	prev := int64(0)
	values := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if tok != json.Delim('}') && tok != json.Delim(']') {
			if values++; values > maxValues {
				return apierr.UserInput(fmt.Sprintf("the body holds more than %d JSON keys and values; send less at once", maxValues),
					apierr.Item{Item: "(body)", Description: fmt.Sprintf("at most %d keys and values", maxValues)})
			}
		}
		end := dec.InputOffset()
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok {
			if reason := badText(data[prev:end]); reason != "" {
				path, what := top.path(stack), "value"
				if top != nil && top.object && top.wantKey {
					what = "key"
				}
				if path == "" {
					path = "(body)"
				}
				return apierr.UserInput("the "+what+" of "+path+" "+reason+"; send the text as UTF-8",
					apierr.Item{Item: path, Description: "a " + what + " " + reason})
			}
			if top != nil && top.object && top.wantKey {
				top.key, top.wantKey = s, false
				prev = end
				continue
			}
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if len(stack) == maxDepth {
				path := top.path(stack)
				if path == "" {
					path = "(body)"
				}
				return apierr.UserInput(fmt.Sprintf("the body nests objects and arrays deeper than %d levels (at %s)", maxDepth, path),
					apierr.Item{Item: path, Description: fmt.Sprintf("at most %d levels", maxDepth)})
			}
			stack = append(stack, &jsonFrame{object: tok == json.Delim('{'), wantKey: true})
			prev = end
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value (scalar or closed container) completes its slot in the enclosing container.
		if len(stack) > 0 {
			stack[len(stack)-1].valueDone()
		}
		prev = end
	}
}

// jsonFrame is one open object or array while walking a JSON document.
type jsonFrame struct {
	object  bool
	wantKey bool // objects: the next string is a key
	key     string
	index   int // arrays: the index of the current element
}

func (f *jsonFrame) valueDone() {
	if f.object {
		f.wantKey = true
	} else {
		f.index++
	}
}

// path is the dot path of the value being read (the current key or element of every open container).
func (f *jsonFrame) path(stack []*jsonFrame) string {
	var parts []string
	for _, fr := range stack {
		switch {
		case fr.object && !fr.wantKey:
			parts = append(parts, fr.key)
		case fr.object && fr == f:
			// Reading a key: the path is the object's.
		case !fr.object:
			parts = append(parts, strconv.Itoa(fr.index))
		}
	}
	return joinPath(parts)
}

func joinPath(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// badText says what is wrong with the raw bytes of a JSON string token (with what precedes it), or "".
func badText(raw []byte) string {
	if !utf8.Valid(raw) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++
			continue
		}
		r, ok := hex4(raw[i+2:])
		switch {
		case !ok:
		case r >= 0xD800 && r <= 0xDBFF:
			// A high surrogate must be followed by a low one.
			if i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, ok := hex4(raw[i+8:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return "holds a lone surrogate escape (not valid Unicode)"
		case r >= 0xDC00 && r <= 0xDFFF:
			return "holds a lone surrogate escape (not valid Unicode)"
		}
		i += 5
	}
	return ""
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(n), err == nil
}
