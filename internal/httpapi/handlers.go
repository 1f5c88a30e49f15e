package httpapi

import (
	"net/http"

	"github.com/hubd/hubd/gen/api"
)

// handlers implements the generated strict-server interface. Each method converts the API request to
// domain terms, calls one domain service, and converts the result back; rules live in the services.
type handlers struct{ s *Server }

var _ api.StrictServerInterface = (*handlers)(nil)

// isTrue reads the 'true'/'false' string parameters (allow_exists).
func isTrue[T ~string](p *T) bool { return p != nil && *p == "true" }

// flag reads an optional boolean parameter (dry_run).
func flag(p *bool) bool { return p != nil && *p }

func deleted(entityType string) api.DeleteResponse {
	return api.DeleteResponse{Error: nil, Message: entityType + " deleted"}
}

// rawJSON writes a pre-encoded JSON document (the API document itself).
type rawJSON []byte

func (r rawJSON) VisitGetAPIDocsResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(r)
	return err
}
