package main

import (
	"fmt"
	"path/filepath"

	"github.com/maskgate/maskgate/config"
	"github.com/maskgate/maskgate/toolsearch"
)

// loadTools reads the profile's tool files, relative to the config file's folder, and
// indexes them once. No files means no profile catalog (nil).
func loadTools(cfg *config.Config, configPath string) (*toolsearch.Index, error) {
	if len(cfg.Tools.Files) == 0 {
		return nil, nil
	}
	paths := make([]string, len(cfg.Tools.Files))
	for i, f := range cfg.Tools.Files {
		if !filepath.IsAbs(f) && configPath != "" {
			f = filepath.Join(filepath.Dir(configPath), f)
		}
		paths[i] = f
	}
	tools, err := toolsearch.ReadFiles(paths...)
	if err != nil {
		return nil, fmt.Errorf("tools.files: %w", err)
	}
	cat, err := toolsearch.New(tools)
	if err != nil {
		return nil, fmt.Errorf("tools.files: %w", err)
	}
	return toolsearch.NewIndex(cat, toolsearch.Options{}), nil
}
