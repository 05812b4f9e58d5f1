package mcp

import (
	"os"
	"testing"

	"github.com/maskgate/maskgate/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcptest.ServeIfChild()
	os.Exit(m.Run())
}
