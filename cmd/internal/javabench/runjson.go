package javabench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"

	"github.com/gocurator/curator/internal/curatorjava"
)

// runJSON runs a one-shot Java benchmark (cmd, made by curatorjava.Command)
// to its end and decodes the last line of its stdout, its report, into
// report. stderr, if not nil, gets the JVM's stderr; otherwise its tail
// goes into the error of a failed run. name labels the errors.
func runJSON(cmd *exec.Cmd, name string, stderr io.Writer, report any) error {
	tail := curatorjava.NewTailBuffer(64 << 10)
	cmd.Stderr = tail
	if stderr != nil {
		cmd.Stderr = stderr
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("javabench: %s: %w\nstderr:\n%s", name, err, tail.String())
	}
	line := bytes.TrimSpace(out.Bytes())
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	if err := json.Unmarshal(line, report); err != nil {
		return fmt.Errorf("javabench: %s answered %q: %w", name, line, err)
	}
	return nil
}
