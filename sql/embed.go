// Package sql embeds the migrations, the only definition of the schema (sqlc reads the same files).
package sql

import "embed"

// Migrations holds migrations/*.sql for golang-migrate's iofs source.
//
//go:embed migrations/*.sql
var Migrations embed.FS
