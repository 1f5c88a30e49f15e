package entity

import (
	"time"

	"github.com/google/uuid"

	"github.com/hubd/hubd/internal/authz"
	"github.com/hubd/hubd/internal/store"
)

// Object is what every entity carries besides the fields its writes set: its identity, where it lives,
// why it is hidden, its Version and its times. A family's entity type embeds it, and its Fields (which
// embed Common): that is how the kit reads every entity, without accessors of the family's.
type Object struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	// SpaceID is the Space the entity lives in; uuid.Nil for families of the organization (Spaces too).
	SpaceID      uuid.UUID
	HiddenReason string
	Version      int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// ObjectMeta is the Object an entity embeds.
func (o Object) ObjectMeta() Object { return o }

// Common are the fields every family's writes set, by their wire names (a merge patch applies to them):
// a family's Fields embed it. Permissions are empty for families whose entities carry none (their
// listing has no Permissions attribute), and absent from their JSON form when empty.
type Common struct {
	Slug        string       `json:"Slug"`
	DisplayName string       `json:"DisplayName"`
	Permissions authz.Grants `json:"Permissions,omitempty"`
	Meta
}

// CommonFields is the Common a family's Fields embed.
func (c Common) CommonFields() Common { return c }

// common gives the kit the Common of Fields it holds, to normalize them.
func (c *Common) common() *Common { return c }

// Normalized returns c with empty maps instead of nil ones.
func (c Common) Normalized() Common {
	c.Meta = c.Meta.Normalized()
	c.Permissions = c.Permissions.Normalized()
	return c
}

// Validate checks the Slug, the map keys and, when withPermissions, the Permissions.
func (c Common) Validate(withPermissions bool) error {
	if err := ValidateSlug(c.Slug); err != nil {
		return err
	}
	if err := c.Meta.Validate(); err != nil {
		return err
	}
	if withPermissions {
		return c.Permissions.Validate("Permissions")
	}
	return nil
}

// DecodeCommon reads the common columns of a row; permissions is nil for families without Permissions.
func DecodeCommon(slug, displayName string, labels, annotations, deleteGates, permissions []byte) (Common, error) {
	c := Common{Slug: slug, DisplayName: displayName}
	var err error
	if c.Meta, err = DecodeMeta(labels, annotations, deleteGates); err != nil {
		return c, err
	}
	if permissions != nil {
		if c.Permissions, err = store.DecodeJSON[authz.Grants](permissions); err != nil {
			return c, err
		}
		c.Permissions = c.Permissions.Normalized()
	}
	return c, nil
}
