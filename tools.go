//go:build tools

// Package tools pins the versions of the code generators that `make generate` runs,
// so what generates gen/ is decided by go.mod, not by what happens to be installed.
package tools

import (
	_ "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen"
	_ "github.com/sqlc-dev/sqlc/cmd/sqlc"
)
