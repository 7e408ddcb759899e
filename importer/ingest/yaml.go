package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"gopkg.in/yaml.v3"
)

// YAMLToJSON converts a YAML document to JSON, keeping every number's text
// as written. NaN and infinities are errors naming the file and line.
func YAMLToJSON(name string, data []byte) ([]byte, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &InputError{File: name, Record: -1, Err: fmt.Errorf("invalid YAML: %w", err)}
	}
	var b bytes.Buffer
	if err := yamlNode(name, &doc, &b, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func yamlNode(name string, n *yaml.Node, b *bytes.Buffer, depth int) error {
	if depth > 200 {
		return &InputError{File: name, Line: n.Line, Record: -1, Err: fmt.Errorf("YAML nested too deeply")}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			b.WriteString("null")
			return nil
		}
		return yamlNode(name, n.Content[0], b, depth+1)
	case yaml.AliasNode:
		return &InputError{File: name, Line: n.Line, Record: -1, Err: fmt.Errorf("YAML aliases are not supported")}
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := yamlNode(name, n.Content[i+1], b, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := yamlNode(name, c, b, depth+1); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			b.WriteString("null")
		case "!!bool":
			v, err := strconv.ParseBool(strings.ToLower(n.Value))
			if err != nil {
				v = strings.EqualFold(n.Value, "yes") || strings.EqualFold(n.Value, "on")
			}
			b.WriteString(strconv.FormatBool(v))
		case "!!int", "!!float":
			v := n.Value
			if _, err := strconv.ParseFloat(v, 64); err != nil || strings.ContainsAny(strings.ToLower(v), "ni_") {
				return &InputError{File: name, Line: n.Line, Record: -1, Err: fmt.Errorf("%q is not a finite number", v)}
			}
			if !json.Valid([]byte(v)) {
				f, _ := strconv.ParseFloat(v, 64)
				v = digits.Shortest(f)
			}
			b.WriteString(v)
		default:
			s, _ := json.Marshal(n.Value)
			b.Write(s)
		}
	}
	return nil
}
