// Package entity holds what every entity family shares: Slug rules, the Labels/Annotations/DeleteGates
// maps, Version checks and the payload of entity change events. A new family composes these instead of
// writing its own.
package entity

import (
	"encoding/json"
	"regexp"
	"sort"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/apierr"
	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/event"
	"github.com/hubd/hubd/internal/store"
)

var slugPattern = regexp.MustCompile(`^[A-Za-z0-9]([\-_.A-Za-z0-9]*[A-Za-z0-9])?$`)

// ValidateSlug checks a Slug (the document enforces the same pattern; this guards other callers).
func ValidateSlug(slug string) error {
	if slug == "" {
		return apierr.UserInput("Slug is required", apierr.Item{Item: "Slug", Description: "required"})
	}
	if len(slug) > 128 || !slugPattern.MatchString(slug) {
		return apierr.UserInput("Slug is not valid",
			apierr.Item{Item: "Slug", Description: "letters, digits, '-', '_' and '.', starting and ending with a letter or digit, at most 128 characters"})
	}
	return nil
}

// Meta are the maps most entities carry.
type Meta struct {
	Labels      map[string]string `json:"Labels"`
	Annotations map[string]string `json:"Annotations"`
	DeleteGates map[string]bool   `json:"DeleteGates"`
}

// Normalized returns m with empty maps instead of nil ones.
func (m Meta) Normalized() Meta {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	if m.DeleteGates == nil {
		m.DeleteGates = map[string]bool{}
	}
	return m
}

// DecodeMeta reads the three jsonb map columns of a row.
func DecodeMeta(labels, annotations, deleteGates []byte) (Meta, error) {
	var m Meta
	var err error
	if m.Labels, err = store.DecodeJSON[map[string]string](labels); err != nil {
		return m, err
	}
	if m.Annotations, err = store.DecodeJSON[map[string]string](annotations); err != nil {
		return m, err
	}
	if m.DeleteGates, err = store.DecodeJSON[map[string]bool](deleteGates); err != nil {
		return m, err
	}
	return m.Normalized(), nil
}

// Validate checks map keys: empty keys cannot be addressed by where expressions.
func (m Meta) Validate() error {
	var items []apierr.Item
	for field, keys := range map[string][]string{"Labels": keysOf(m.Labels), "Annotations": keysOf(m.Annotations), "DeleteGates": keysOf(m.DeleteGates)} {
		for _, k := range keys {
			if k == "" || len(k) > 253 {
				items = append(items, apierr.Item{Item: field, Description: "keys must be 1 to 253 characters long"})
				break
			}
		}
	}
	if len(items) > 0 {
		sort.Slice(items, func(i, j int) bool { return items[i].Item < items[j].Item })
		return apierr.Validation("invalid map keys", items...)
	}
	return nil
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// RequireVersion refuses a PUT without the Version that was read.
func RequireVersion(version int64) error {
	if version <= 0 {
		return apierr.UserInput("Version is required on PUT: send back the Version you read",
			apierr.Item{Item: "Version", Description: "required"})
	}
	return nil
}

// CheckVersion compares a sent Version with the stored one; nil means none was sent (a PATCH may omit it).
func CheckVersion(entityType string, id uuid.UUID, sent *int64, stored int64) error {
	if sent != nil && *sent != stored {
		return apierr.StaleVersion(entityType, id.String(), *sent, stored)
	}
	return nil
}

// SentVersion reads the Version a merge patch carries (nil when absent or null).
func SentVersion(patch []byte) (*int64, error) {
	var sent struct{ Version *int64 }
	if err := json.Unmarshal(patch, &sent); err != nil {
		return nil, apierr.UserInput("the body is not a JSON object")
	}
	return sent.Version, nil
}

// CheckDeleteGates refuses to delete an entity while it has DeleteGates.
func CheckDeleteGates(entityType string, id uuid.UUID, slug string, gates map[string]bool) error {
	if len(gates) == 0 {
		return nil
	}
	names := keysOf(gates)
	sort.Strings(names)
	items := make([]apierr.Item, len(names))
	for i, n := range names {
		items[i] = apierr.Item{Item: "DeleteGates." + n, Description: "remove this gate to allow deletion"}
	}
	e := apierr.Conflict("the %s has DeleteGates and cannot be deleted; remove them first", entityType).WithEntity(entityType, id.String(), slug)
	e.Items = items
	return e
}

// Change is the kind of an entity change event.
type Change string

// The three entity changes.
const (
	Created Change = "created"
	Updated Change = "updated"
	Deleted Change = "deleted"
)

// ChangeEvent builds the <family>.<change> event of an entity (unit.created, space.deleted...).
func ChangeEvent(family, entityType string, change Change, orgID, id uuid.UUID, slug string, version int64, space *SpaceRef) event.Event {
	e := event.Event{
		OrganizationID:    orgID,
		EventType:         family + "." + string(change),
		SubjectEntityType: entityType,
		SubjectEntityID:   id,
	}
	p := event.EntityPayload{EntityType: entityType, EntityID: id, Slug: slug, Version: version}
	if space != nil {
		e.SpaceID = &space.ID
		p.SpaceSlug = space.Slug
	}
	e.Payload = p
	return e
}

// SpaceRef names the Space an entity lives in, for events.
type SpaceRef struct {
	ID   uuid.UUID
	Slug string
}

// SlugClash names the entity of a write's AlreadyExists (the unique violation of a concurrent write of
// the same Slug, translated where the query ran): AlreadyExists of entityType with its Slug. Any other
// error is returned unchanged.
func SlugClash(err error, entityType, slug string) error {
	if apierr.Is(err, apierr.TypeAlreadyExists) {
		return apierr.AlreadyExists(entityType, slug)
	}
	return err
}

// MergePatch applies an RFC 7386 merge patch to the JSON form of fields (their wire names).
func MergePatch(fields any, patch []byte) ([]byte, error) {
	doc, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	merged, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		return nil, apierr.UserInput("the merge patch cannot be applied: " + err.Error())
	}
	return merged, nil
}

// PermissionTargets decodes the Permissions of rows read for many entities at once into their permission
// targets, by ID: of gives each row's ID, its Permissions column and its target without grants.
func PermissionTargets[R any](rows []R, of func(R) (uuid.UUID, []byte, authz.Target)) (map[uuid.UUID]authz.Target, error) {
	out := make(map[uuid.UUID]authz.Target, len(rows))
	for _, r := range rows {
		id, permissions, t := of(r)
		var err error
		if t.Grants, err = store.DecodeJSON[authz.Grants](permissions); err != nil {
			return nil, err
		}
		out[id] = t
	}
	return out, nil
}
