package httpapi

import (
	"github.com/hubd/hubd/gen/api"
	"github.com/hubd/hubd/internal/entity"
)

// The document endpoints of every family that has them answer and take entity.Documents.

func documentToAPI(d entity.Document) api.EntityDocument {
	return api.EntityDocument{EntityType: d.EntityType, Version: d.Version, Document: d.Document}
}

func documentFromAPI(d api.EntityDocument) entity.Document {
	return entity.Document{EntityType: d.EntityType, Version: d.Version, Document: d.Document}
}
