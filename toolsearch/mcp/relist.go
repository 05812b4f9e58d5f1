package mcp

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/maskgate/maskgate/toolsearch"
)

// listTools reads every page of tools/list.
func (s *Server) listTools(ctx context.Context, cs *sdk.ClientSession) (listing, error) {
	var tools []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return listing{}, fmt.Errorf("tools/list: %w", err)
		}
		if len(tools) == maxTools {
			s.log.Warn("mcp: server lists too many tools; the rest are left out", "server", s.cfg.Name, "limit", maxTools)
			break
		}
		tools = append(tools, t)
	}
	if s.allow != nil {
		for _, a := range s.cfg.Allow {
			if !slices.ContainsFunc(tools, func(t *sdk.Tool) bool { return t != nil && t.Name == a }) {
				s.log.Warn("mcp: allow names a tool the server does not list", "server", s.cfg.Name, "tool", a)
			}
		}
	}
	return convert(s.cfg.Name, tools, s.allow, s.log), nil
}

// install makes l the listing, under s.mu, and reports whether the tools
// changed (the first listing always does).
func (s *Server) install(l listing) bool {
	changed := !s.listed || !sameTools(s.list.tools, l.tools)
	s.list, s.listed = l, true
	return changed
}

// toolsChanged handles notifications/tools/list_changed: a goroutine
// re-reads the list (not the SDK's, which must go on reading messages).
func (s *Server) toolsChanged() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.relisting {
		s.relistAgain = true
		return
	}
	s.relisting = true
	s.wg.Add(1)
	go s.relistLoop()
}

func (s *Server) relistLoop() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		s.relistAgain = false
		cs, d := s.sess, s.dialing
		s.mu.Unlock()
		if cs == nil && d != nil {
			// The notification came while connecting: list once connected.
			select {
			case <-d.done:
			case <-s.life.Done():
			}
			cs = d.sess
		}
		if cs != nil {
			s.relist(cs)
		}
		s.mu.Lock()
		if !s.relistAgain || s.closed {
			s.relisting = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

func (s *Server) relist(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.life, s.timeout)
	defer cancel()
	l, err := s.listTools(ctx, cs)
	if err != nil {
		if s.life.Err() == nil {
			s.log.Warn("mcp: cannot re-read the tool list", "server", s.cfg.Name, "error", err)
		}
		return
	}
	s.mu.Lock()
	changed := false
	if s.sess == cs && !s.closed {
		changed = s.install(l)
	}
	s.mu.Unlock()
	if changed {
		s.log.Info("mcp: tool list changed", "server", s.cfg.Name, "tools", len(l.tools))
		if s.cfg.OnChange != nil {
			s.cfg.OnChange()
		}
	}
}

// Tools returns the server's allowed tools, namespaced, in the server's
// listing order: the last listing read, empty before the first. The tools'
// Parameters are shared and must not be modified.
func (s *Server) Tools() []toolsearch.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list.tools)
}
