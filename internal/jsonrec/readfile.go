package jsonrec

import (
	"fmt"
	"os"
)

// ReadFile reads the file at path and gives its content to read, with
// the path as the name errors and warnings start with. An error opening
// or reading the file is wrapped as "what: ..." (a reader's name for its
// format, such as "codex").
func ReadFile[T any](path, what string, read func(data []byte, name string) (T, error)) (T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	return read(data, path)
}
