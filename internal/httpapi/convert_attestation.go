package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/attestation"
	"github.com/hubd/hubd/internal/entity"
)

// attestationEdge serves the Attestation operations (list, get and create: an Attestation is never
// updated or deleted).
var attestationEdge = &edge[attestation.Attestation, attestation.Fields, api.Attestation, api.ExtendedAttestation]{
	service:   served(attestation.Family),
	listing:   attestation.ListEntity,
	toAPI:     attestationToAPI,
	fields:    attestationFields,
	relations: []relation[attestation.Attestation]{inSpace[attestation.Attestation]()},
	extended: func(a attestation.Attestation, x api.Attestation, r *related) api.ExtendedAttestation {
		return api.ExtendedAttestation{Attestation: x, Organization: r.organization, Space: relatedOne[api.Space](r, "SpaceID", a.SpaceID)}
	},
}

func attestationToAPI(a attestation.Attestation) api.Attestation {
	return api.Attestation{AttestationID: a.ID, SpaceID: a.SpaceID, OrganizationID: a.OrganizationID, UserID: a.UserID,
		Type: a.Type, Result: a.Result, RevisionIDs: a.RevisionIDs, Claims: a.Claims, Note: a.Note, ExpiresAt: a.ExpiresAt,
		EvidenceAttestationIDs: a.EvidenceAttestationIDs, RevokedAttestationID: a.RevokedAttestationID, ReleaseID: a.ReleaseID,
		ChangeOrderID: a.ChangeOrderID, Permissions: permissionsToAPI(a.Permissions), HiddenReason: a.HiddenReason,
		EntityType: attestation.EntityType, CreatedAt: a.CreatedAt.UTC()}
}

func attestationFields(b *api.Attestation) attestation.Fields {
	return attestation.Fields{Common: entity.Common{Permissions: permissionsFromAPI(b.Permissions)},
		Type: b.Type, Result: b.Result, RevisionIDs: b.RevisionIDs, Claims: b.Claims, Note: b.Note, ExpiresAt: b.ExpiresAt,
		EvidenceAttestationIDs: b.EvidenceAttestationIDs, RevokedAttestationID: b.RevokedAttestationID,
		ReleaseID: b.ReleaseID, ChangeOrderID: b.ChangeOrderID}
}
