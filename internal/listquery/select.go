package listquery

import (
	"fmt"
	"strings"

	"github.com/hubd/hubd/internal/apierr"
)

// SplitSelect separates the names of a select that the entity does not know from the others. The HTTP
// edge ignores unknown names and names each in a warning, as it does unknown body fields, so that clients
// written for an older or a newer version of the API keep working; lists and reads check the rest. known
// is sel without the unknown names.
func SplitSelect(e *Entity, sel string) (known string, unknown []string) {
	names := splitList(sel)
	kept := make([]string, 0, len(names))
	for _, n := range names {
		if e.knowsSelectName(n) {
			kept = append(kept, n)
		} else {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return sel, nil
	}
	return strings.Join(kept, ","), unknown
}

// knowsSelectName reports whether a select name means something for the entity: one of its fields, Data
// (which select refuses with its own message), or <Field>.<field> of a related entity an include expands
// (any field, while the related family is not served and so has no fields to check).
func (e *Entity) knowsSelectName(n string) bool {
	field, sub, dotted := strings.Cut(n, ".")
	if !dotted {
		return n == "Data" || e.Attr(n) != nil
	}
	in := e.filledBy(field)
	if in == nil {
		return false
	}
	of := Lookup(in.EntityType())
	return of == nil || of.Attr(sub) != nil
}

// unknownSelectName is the error of a select name the entity does not know, for callers that did not
// split unknown names off first.
func unknownSelectName(e *Entity, n string) error {
	field, sub, dotted := strings.Cut(n, ".")
	if !dotted {
		return apierr.UserInput(fmt.Sprintf("select: %q is not a field of %s; use one of: %s", n, e.Name, e.names(func(*Attribute) bool { return true })),
			apierr.Item{Item: "select", Description: "unknown field " + n})
	}
	in := e.filledBy(field)
	if in == nil {
		fills := make([]string, len(e.Includes))
		for i, inc := range e.Includes {
			fills[i] = inc.Field
		}
		return apierr.UserInput(fmt.Sprintf("select: %q names no related entity of %s; a dotted field is <Entity>.<Field> of one that include expands: %s",
			n, e.Name, strings.Join(fills, ", ")), apierr.Item{Item: "select", Description: "unknown field " + n})
	}
	of := Lookup(in.EntityType())
	return apierr.UserInput(fmt.Sprintf("select: %q is not a field of %s; use one of: %s", sub, of.Name, of.names(func(*Attribute) bool { return true })),
		apierr.Item{Item: "select", Description: "unknown field " + n})
}
