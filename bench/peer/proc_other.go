//go:build !linux

package main

import (
	"os"
	"os/exec"
	"time"
)

const clockTick = 10 * time.Millisecond

// procCPU needs Linux's /proc.
func procCPU(int) (time.Duration, error) { return 0, errNoProc }

// selfCPU needs Linux's getrusage here.
func selfCPU() (time.Duration, error) { return 0, errNoProc }

func setChildAttrs(*exec.Cmd) {}

func lockFile(*os.File) error   { return nil }
func unlockFile(*os.File) error { return nil }
