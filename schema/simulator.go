package schema

import (
	"encoding/json"
	"fmt"
)

// How benchseal's simulator identifies itself (package simulator sets
// them; capture stores what it answered): the owned_by of its models,
// the response header on every answer, the /version field, and the
// default model name its /metrics label values carry.
const (
	SimulatorOwner  = "benchseal-simulator"
	SimulatorHeader = "X-Benchseal-Simulator"
	SimulatorModel  = "benchseal-sim"
	// SimulatorNote is the manifest.notes key capture sets when the
	// server identified itself as the simulator (by any of the above).
	SimulatorNote = "simulator"
)

// SimulatorIdentity lists every piece of the simulator's
// self-identification the manifest still holds, each naming its field:
// the /version answer with "simulator": true, a /v1/models answer with a
// model owned_by SimulatorOwner, engine.name SimulatorOwner, and capture's
// simulator note. Any one of them makes the run synthetic, whatever its
// evidence says.
func SimulatorIdentity(m *Manifest) []string {
	var out []string
	if v, ok := m.Engine.Server["/version"]; ok {
		var ans struct {
			Simulator bool `json:"simulator"`
		}
		if json.Unmarshal([]byte(v), &ans) == nil && ans.Simulator {
			out = append(out, `engine.server["/version"] has "simulator": true`)
		}
	}
	if v, ok := m.Engine.Server["/v1/models"]; ok {
		var ans struct {
			Data []struct {
				OwnedBy string `json:"owned_by"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(v), &ans) == nil {
			for _, d := range ans.Data {
				if d.OwnedBy == SimulatorOwner {
					out = append(out, fmt.Sprintf(`engine.server["/v1/models"] has a model owned_by %q`, SimulatorOwner))
					break
				}
			}
		}
	}
	if m.Engine.Name == SimulatorOwner {
		out = append(out, fmt.Sprintf("engine.name is %q", SimulatorOwner))
	}
	if _, ok := m.Notes[SimulatorNote]; ok {
		out = append(out, fmt.Sprintf("notes.%s says the server identified itself as the simulator (%s header or owned_by)", SimulatorNote, SimulatorHeader))
	}
	return out
}
