//go:build !linux

package archive

import "os"

// runFile makes a sorted run's file in dir (createRun's), and reports it
// named.
func runFile(dir string) (*os.File, bool, error) { return createRun(dir) }
