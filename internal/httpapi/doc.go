// Package httpapi is the HTTP edge of hubd: the Echo server, the middleware every request passes
// (request IDs, recovery, logging, metrics, timeouts, the contract check against the OpenAPI document,
// authentication and per-caller limits), the one error handler that renders the API's error body, and
// the handlers that implement the generated strict-server interface by calling the domain services.
//
// A request flows: Echo route -> middleware -> contract (operation lookup, body limit, content type,
// authentication, unknown-field stripping, kin-openapi validation) -> generated strict handler ->
// handler (this package: converts API types to domain types) -> domain service (rules, authz, store).
package httpapi
