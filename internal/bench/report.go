package bench

import (
	"encoding/json"
	"os"
)

// Report is everything one run of the command measured, as written by
// -json.
type Report struct {
	Header      Header             `json:"header"`
	Settings    Settings           `json:"settings"`
	Results     Rows               `json:"results"`
	Uncontended *UncontendedResult `json:"uncontended,omitempty"`
	Sweep       Rows               `json:"sweep,omitempty"`
	Scale       *Scale             `json:"scale,omitempty"`
	Diagnose    Rows               `json:"diagnose,omitempty"`
	Targets     []Target           `json:"targets,omitempty"`
	Skipped     []string           `json:"skipped,omitempty"`
}

// Settings are the command's measuring settings.
type Settings struct {
	Clients   int    `json:"clients"`
	Warmup    string `json:"warmup"`
	Duration  string `json:"duration"`
	MaxLeases int    `json:"max_leases"`
	Peers     bool   `json:"peers"`
}

// WriteJSON writes r, indented, to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
