package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// SchemaPlan names the published JSON Schema of a pre-registered plan
// (package plan).
const SchemaPlan = "plan"

// DecodeDocument decodes a JSON document of another package (a plan) with
// the same rules as DecodeManifest: at most limit bytes, one value, valid
// UTF-8, no duplicate keys, valid against the named published JSON Schema,
// no unknown fields. name names the file in errors.
func DecodeDocument(r io.Reader, limit int64, name, schemaName string, v any) error {
	return decodeDocument(r, limit, name, schemaName, v)
}

// DecodeStrictJSON decodes b into v: exactly one JSON value in valid UTF-8
// without duplicate keys, and no unknown fields.
func DecodeStrictJSON(b []byte, v any) error {
	if err := checkDocument(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	return nil
}
