//go:build !linux

package archive

import "os"

// runFile makes a sorted run's file in dir (createRun's).
func runFile(dir string) (*os.File, error) { return createRun(dir) }
