// Package store is the one door to PostgreSQL: the connection pool, the transaction helper every write
// goes through (WithTx), and the translation of database errors into apierr errors. It wraps the
// sqlc-generated queries of gen/db; domain packages use them through a Tx or Store.Q and convert rows
// to their own types.
package store
