// Package auth mints and verifies hubd service tokens: ES256 JWTs signed with keys kept in PostgreSQL
// and shared by every replica, published as a JWKS. The API accepts nothing else. A verified token
// becomes a Principal (user, organization, role) carried in the request's context.
package auth
