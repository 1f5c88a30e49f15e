// Package migrate applies the embedded schema migrations with golang-migrate. Its pgx/v5 driver holds
// an advisory lock while migrating, so several replicas starting at once apply each migration once.
package migrate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	_ "github.com/golang-migrate/migrate/v4/database/pgx/v5" // registers pgx5://
	"github.com/golang-migrate/migrate/v4/source/iofs"

	hubdsql "github.com/hubd/hubd/sql"
)

func open(databaseURL string) (*migrate.Migrate, error) {
	src, err := iofs.New(hubdsql.Migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("opening embedded migrations: %w", err)
	}
	m, err := migrate.NewWithSourceInstance("iofs", src, driverURL(databaseURL))
	if err != nil {
		return nil, fmt.Errorf("connecting to run migrations: %w", err)
	}
	return m, nil
}

// driverURL points golang-migrate at its pgx/v5 driver.
func driverURL(u string) string {
	for _, prefix := range []string{"postgres://", "postgresql://"} {
		if strings.HasPrefix(u, prefix) {
			return "pgx5://" + strings.TrimPrefix(u, prefix)
		}
	}
	return u
}

// Up applies every migration not yet applied.
func Up(databaseURL string) error {
	m, err := open(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrating up: %w", err)
	}
	return nil
}

// Down reverts the last n migrations (all when n <= 0).
func Down(databaseURL string, n int) error {
	m, err := open(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if n <= 0 {
		err = m.Down()
	} else {
		err = m.Steps(-n)
	}
	if err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrating down: %w", err)
	}
	return nil
}

// To migrates up or down to version exactly (for tests that seed data in an older schema).
func To(databaseURL string, version uint) error {
	m, err := open(databaseURL)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Migrate(version); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrating to %d: %w", version, err)
	}
	return nil
}

// Version reports the applied version and whether a failed migration left the schema dirty.
func Version(databaseURL string) (uint, bool, error) {
	m, err := open(databaseURL)
	if err != nil {
		return 0, false, err
	}
	defer m.Close()
	v, dirty, err := m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return v, dirty, err
}
