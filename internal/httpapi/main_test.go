package httpapi_test

import (
	"testing"

	"github.com/hubd/hubd/internal/apitest"
)

// TestMain fails the package when an operation of the document has no HTTP test.
func TestMain(m *testing.M) { apitest.Main(m) }
