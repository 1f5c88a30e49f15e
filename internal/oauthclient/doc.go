// Package oauthclient registers the public OAuth clients browser apps sign in with (RFC 7591-style): an
// organization's admin creates one with exact redirect URIs and gets a server-generated client_id, which
// is public and not secret; there is no secret and no update (delete and create again).
//
// The origins of every registered redirect URI, of any organization, may call the API from a browser
// (CORS): a preflight carries no token, so the set is instance-wide. Each replica keeps it in memory,
// reloaded when a create or delete commits on any replica (NOTIFY hubd_oauth_client, received through
// the replica's event.Notifier), at every reconnect of the listener, and periodically as a safety net.
package oauthclient
