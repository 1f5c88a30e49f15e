package entity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// Document is an entity as a person edits it: the fields a write sets (by their wire names), with the
// entities it references named instead of identified, and the Version it was read at.
type Document struct {
	EntityType string
	Version    int64
	Document   json.RawMessage
}

// DocumentSpec says how a family's entities read as documents: the fields left out (changed by other
// writes) and the references shown by name.
type DocumentSpec struct {
	Omit []string
	Refs []DocumentRef
}

// DocumentRef is a reference field (FilterID) shown in documents as a name (Filter).
type DocumentRef struct {
	Field, Name string
	// Named is the name of the entity id, for a document of an entity in spaceID; Resolve is the ID a name
	// stands for (NotFound when it names nothing the caller may view).
	Named   func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID, id uuid.UUID) (string, error)
	Resolve func(ctx context.Context, sc authz.Scope, c store.Conn, spaceID uuid.UUID, name string) (uuid.UUID, error)
}

// Document reads an entity as a document.
func (s *Service[R, E, F]) Document(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string) (Document, error) {
	e, err := s.Get(ctx, sc, spaceID, ref)
	if err != nil {
		return Document{}, err
	}
	return s.document(ctx, sc, e)
}

func (s *Service[R, E, F]) document(ctx context.Context, sc authz.Scope, e E) (Document, error) {
	o := e.ObjectMeta()
	raw, err := json.Marshal(s.fieldsOf(e))
	if err != nil {
		return Document{}, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Document{}, err
	}
	spec := s.hooks().document
	for _, name := range spec.Omit {
		delete(fields, name)
	}
	for _, r := range spec.Refs {
		var id *uuid.UUID
		if err := json.Unmarshal(fields[r.Field], &id); err != nil {
			return Document{}, err
		}
		delete(fields, r.Field)
		fields[r.Name] = json.RawMessage("null")
		if id != nil {
			name, err := r.Named(ctx, sc, s.Store.Conn(), o.SpaceID, *id)
			if err != nil {
				return Document{}, err
			}
			fields[r.Name], _ = json.Marshal(name)
		}
	}
	doc, err := json.Marshal(fields)
	return Document{EntityType: s.Type, Version: o.Version, Document: doc}, err
}

// ApplyDocument applies an edit of a document: the difference from base (the document as read) to edited
// is a merge patch, so fields the edit left alone keep what concurrent writes gave them and fields it
// removed are cleared. base's Version must be the entity's (else 409 Conflict). An edit that changes
// nothing writes nothing (no new Version).
func (s *Service[R, E, F]) ApplyDocument(ctx context.Context, sc authz.Scope, spaceID uuid.UUID, ref string, base, edited Document, dryRun bool) (Document, error) {
	for _, d := range []struct {
		name string
		doc  Document
	}{{"Base", base}, {"Document", edited}} {
		if d.doc.EntityType != s.Type {
			return Document{}, apierr.Validation(fmt.Sprintf("%s.EntityType is %q; this is a %s's document", d.name, d.doc.EntityType, s.Type),
				apierr.Item{Item: d.name + ".EntityType", Description: "not " + s.Type})
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(d.doc.Document, &obj); err != nil || obj == nil {
			return Document{}, apierr.Validation(d.name+".Document must be a JSON object", apierr.Item{Item: d.name + ".Document", Description: "not an object"})
		}
	}
	diff, err := jsonpatch.CreateMergePatch(base.Document, edited.Document)
	if err != nil {
		return Document{}, apierr.UserInput("the documents cannot be compared: " + err.Error())
	}
	var patch map[string]json.RawMessage
	if err := json.Unmarshal(diff, &patch); err != nil {
		return Document{}, err
	}
	if len(patch) == 0 {
		e, err := s.Get(ctx, sc, spaceID, ref)
		if err != nil {
			return Document{}, err
		}
		if err := authz.Check(sc, authz.Edit, s.target(e)); err != nil {
			return Document{}, err
		}
		if err := CheckVersion(s.Type, e.ObjectMeta().ID, &base.Version, e.ObjectMeta().Version); err != nil {
			return Document{}, err
		}
		return s.document(ctx, sc, e)
	}
	spec := s.hooks().document
	for _, name := range spec.Omit {
		if _, ok := patch[name]; ok {
			return Document{}, apierr.Validation(fmt.Sprintf("Document: %s is not part of a %s's document; change it with a patch", name, s.Type),
				apierr.Item{Item: "Document." + name, Description: "not in the document"})
		}
	}
	cur, err := s.Get(ctx, sc, spaceID, ref)
	if err != nil {
		return Document{}, err
	}
	for _, r := range spec.Refs {
		raw, ok := patch[r.Name]
		if !ok {
			continue
		}
		delete(patch, r.Name)
		var name *string
		if err := json.Unmarshal(raw, &name); err != nil {
			return Document{}, apierr.Validation(fmt.Sprintf("Document.%s names a %s: a string or null", r.Name, r.Name),
				apierr.Item{Item: "Document." + r.Name, Description: "not a name"})
		}
		patch[r.Field] = json.RawMessage("null")
		if name != nil {
			id, err := r.Resolve(ctx, sc, s.Store.Conn(), cur.ObjectMeta().SpaceID, *name)
			if apierr.Is(err, apierr.TypeNotFound) {
				return Document{}, apierr.Validation(fmt.Sprintf("Document.%s: no %s %q that you may view", r.Name, r.Name, *name),
					apierr.Item{Item: "Document." + r.Name, Description: "no such " + r.Name})
			}
			if err != nil {
				return Document{}, err
			}
			patch[r.Field], _ = json.Marshal(id)
		}
	}
	var f F
	if unknown := unknownKeys(reflect.TypeOf(f), patch, "Document"); len(unknown) > 0 {
		items := make([]apierr.Item, len(unknown))
		for i, k := range unknown {
			items[i] = apierr.Item{Item: k, Description: "no such field (keys are matched exactly)"}
		}
		return Document{}, apierr.Validation(fmt.Sprintf("%s: no field of a %s's document has this name (keys are matched exactly, case included)",
			strings.Join(unknown, ", "), s.Type), items...)
	}
	patch["Version"], _ = json.Marshal(base.Version)
	body, err := json.Marshal(patch)
	if err != nil {
		return Document{}, err
	}
	e, err := s.Patch(ctx, sc, spaceID, ref, body, dryRun)
	if err != nil {
		return Document{}, err
	}
	return s.document(ctx, sc, e)
}

// unknownKeys returns the paths (under path, sorted) of the keys of a JSON value that no field of t has
// by exactly that name. encoding/json matches keys without regard to case, so a key that differs from a
// field's name only in case would be merged into that field: a document's keys are matched exactly
// instead. Map keys are data; what decodes itself (json.Unmarshaler, json.RawMessage, any) is not looked into.
func unknownKeys(t reflect.Type, value any, path string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	var out []string
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := value.(map[string]json.RawMessage)
		if !ok {
			if err := json.Unmarshal(rawOf(value), &obj); err != nil {
				return nil // not an object: decoding reports it
			}
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ft, ok := fields[k]
			if !ok {
				out = append(out, path+"."+k)
				continue
			}
			out = append(out, unknownKeys(ft, obj[k], path+"."+k)...)
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(rawOf(value), &obj) != nil {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			out = append(out, unknownKeys(t.Elem(), obj[k], path+"."+k)...)
		}
	case reflect.Slice, reflect.Array:
		var list []json.RawMessage
		if json.Unmarshal(rawOf(value), &list) != nil {
			return nil
		}
		for i, v := range list {
			out = append(out, unknownKeys(t.Elem(), v, path+"."+strconv.Itoa(i))...)
		}
	}
	return out
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func rawOf(value any) []byte {
	if raw, ok := value.(json.RawMessage); ok {
		return raw
	}
	raw, _ := json.Marshal(value)
	return raw
}

// jsonFields are the exact JSON names of a struct type's fields (those of embedded structs included, as
// encoding/json promotes them), with their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for k, v := range jsonFields(ft) {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
