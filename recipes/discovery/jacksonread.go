package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Curator 5.4 reads an instance with Jackson 2.14 at its default settings,
// which coerce more than encoding/json does; a Go reader that is stricter
// hides instances every Java client routes to. The rules below are
// Jackson's defaults for ServiceInstance's fields, checked against the real
// jar case by case (jackson_test.go's table and its interop test):
//
//   - String fields (name, id, address, a URI part's value) take a number
//     (its text as written) or a boolean ("true"); an object or array is
//     refused. A missing name or id is "" (ServiceInstance's no-argument
//     constructor), null is kept as null (read here as "").
//   - Integer fields (port, sslPort: Integer; registrationTimeUTC: long)
//     take a float, truncated toward zero (ACCEPT_FLOAT_AS_INT), and a
//     string holding a decimal integer, trimmed, with an optional sign;
//     "" and "null" are null (0 for the long). Out of range, a fraction or
//     exponent inside a string, hex and booleans are refused.
//   - Booleans (enabled, a URI part's variable; Java primitives) take an
//     integer (0 is false), the strings "true", "True", "TRUE" and the
//     three spellings of false, trimmed; null, "" and "null" are false;
//     a float or another string is refused. A missing "enabled" is true.
//   - serviceType takes the constant's name (trimmed), or its index as a
//     number or a string of digits (0 DYNAMIC ... 3 DYNAMIC_SEQUENTIAL);
//     null is null, a missing field is DYNAMIC; "" and lower case are
//     refused.
//   - The payload is read through Jackson's type tag: an array must be the
//     wrapper ["class", value] and an object's "@class" a string. (A class
//     a Java reader does not have fails there only, so it is kept.)
//   - uriSpec takes a string, parsed as a template (UriSpec's String
//     constructor), or an object whose "parts" is an array (missing or
//     null: no part).
//   - Field names match exactly (Jackson is case-sensitive, encoding/json
//     is not); unknown fields are ignored; the last of duplicate fields
//     wins.

// javaTrim is Java's String.trim: it strips the characters up to U+0020.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// jsonKind is the first byte of a JSON value: '"', '{', '[', 't', 'f',
// 'n', or '0' for a number.
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; c {
	case '"', '{', '[', 't', 'f', 'n':
		return c
	}
	return '0'
}

// readString reads a Java String field; ok is false for null.
func readString(field string, raw json.RawMessage) (s string, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	switch jsonKind(raw) {
	case 'n':
		return "", false, nil
	case '"':
		err := json.Unmarshal(raw, &s)
		return s, true, err
	case 't', 'f', '0':
		return string(raw), true, nil
	}
	return "", false, fmt.Errorf("%w: %q is not a string: %s", ErrMalformed, field, raw)
}

// readInteger reads a Java int (bits 32) or long (bits 64); ok is false
// for null.
func readInteger(field string, raw json.RawMessage, bits int) (v int64, ok bool, err error) {
	raw = bytes.TrimSpace(raw)
	bad := func(why string) (int64, bool, error) {
		return 0, false, fmt.Errorf("%w: %q %s: %s", ErrMalformed, field, why, raw)
	}
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if bits == 64 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	switch jsonKind(raw) {
	case 'n':
		return 0, false, nil
	case '0':
		if n, err := strconv.ParseInt(string(raw), 10, bits); err == nil {
			return n, true, nil
		}
		if bytes.ContainsAny(raw, ".eE") {
			f, err := strconv.ParseFloat(string(raw), 64)
			// Java compares the double with the bounds as doubles.
			if err != nil || f < float64(lo) || f > float64(hi) {
				return bad("is outside Java's range")
			}
			return int64(f), true, nil
		}
		return bad("is outside Java's range")
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return bad("is not a number")
		}
		s = javaTrim(s)
		if s == "" || s == "null" {
			return 0, false, nil
		}
		for i, c := range s {
			if (c < '0' || c > '9') && !(i == 0 && (c == '+' || c == '-') && len(s) > 1) {
				return bad("is not an integer")
			}
		}
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return bad("is outside Java's range")
		}
		return n, true, nil
	}
	return bad("is not a number")
}

// readBool reads a Java boolean primitive: null is false.
func readBool(field string, raw json.RawMessage) (bool, error) {
	raw = bytes.TrimSpace(raw)
	switch jsonKind(raw) {
	case 'n', 'f':
		return false, nil
	case 't':
		return true, nil
	case '0':
		if !bytes.ContainsAny(raw, ".eE") {
			return string(bytes.TrimLeft(raw, "-")) != "0", nil
		}
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			switch javaTrim(s) {
			case "true", "True", "TRUE":
				return true, nil
			case "false", "False", "FALSE", "", "null":
				return false, nil
			}
		}
	}
	return false, fmt.Errorf("%w: %q is not a boolean: %s", ErrMalformed, field, raw)
}

// serviceTypes is Curator's ServiceType enum, in its declaration order:
// Jackson reads an index into it.
var serviceTypes = []ServiceType{Dynamic, Static, Permanent, DynamicSequential}

// readServiceType reads the serviceType enum; "" for null.
func readServiceType(raw json.RawMessage) (ServiceType, error) {
	raw = bytes.TrimSpace(raw)
	bad := fmt.Errorf("%w: unknown serviceType %s", ErrMalformed, raw)
	switch jsonKind(raw) {
	case 'n':
		return "", nil
	case '0':
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 0 || n >= len(serviceTypes) {
			return "", bad
		}
		return serviceTypes[n], nil
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", bad
		}
		s = javaTrim(s)
		for _, t := range serviceTypes {
			if s == string(t) {
				return t, nil
			}
		}
		if s != "" && s[0] >= '0' && s[0] <= '9' {
			if n, err := strconv.Atoi(s); err == nil && n < len(serviceTypes) {
				return serviceTypes[n], nil
			}
		}
	}
	return "", bad
}

// readURISpec reads the uriSpec field; nil for null.
func readURISpec(raw json.RawMessage) (*URISpec, error) {
	raw = bytes.TrimSpace(raw)
	switch jsonKind(raw) {
	case 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("%w: uriSpec: %w", ErrMalformed, err)
		}
		u, err := ParseURISpec(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		return u, nil
	case '{':
	default:
		return nil, fmt.Errorf("%w: uriSpec is not an object: %s", ErrMalformed, raw)
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("%w: uriSpec: %w", ErrMalformed, err)
	}
	u := &URISpec{Parts: []URIPart{}}
	parts := bytes.TrimSpace(spec["parts"])
	switch jsonKind(parts) {
	case 0, 'n':
		// Curator reads it, with no parts.
		return u, nil
	case '[':
	default:
		return nil, fmt.Errorf("%w: uriSpec parts is not an array: %s", ErrMalformed, parts)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(parts, &list); err != nil {
		return nil, fmt.Errorf("%w: uriSpec parts: %w", ErrMalformed, err)
	}
	for _, p := range list {
		if jsonKind(p) != '{' {
			return nil, fmt.Errorf("%w: uriSpec part is not an object: %s", ErrMalformed, p)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(p, &fields); err != nil {
			return nil, fmt.Errorf("%w: uriSpec part: %w", ErrMalformed, err)
		}
		var part URIPart
		var err error
		if v, ok := fields["value"]; ok {
			if part.Value, _, err = readString("value", v); err != nil {
				return nil, err
			}
		}
		if v, ok := fields["variable"]; ok {
			if part.Variable, err = readBool("variable", v); err != nil {
				return nil, err
			}
		}
		u.Parts = append(u.Parts, part)
	}
	return u, nil
}

// decodeInstance reads Curator's ServiceInstance JSON as Curator 5.4 does.
func decodeInstance(data []byte) (Instance, error) {
	if jsonKind(data) != '{' {
		return Instance{}, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Instance{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	// ServiceInstance's no-argument constructor: what a missing field is.
	out := Instance{ServiceType: Dynamic}
	var err error
	for _, f := range []struct {
		name string
		dst  *string
	}{{"name", &out.Name}, {"id", &out.ID}, {"address", &out.Address}} {
		if raw, ok := fields[f.name]; ok {
			if *f.dst, _, err = readString(f.name, raw); err != nil {
				return Instance{}, err
			}
		}
	}
	for _, f := range []struct {
		name string
		dst  **int
	}{{"port", &out.Port}, {"sslPort", &out.SSLPort}} {
		if raw, ok := fields[f.name]; ok {
			n, ok, err := readInteger(f.name, raw, 32)
			if err != nil {
				return Instance{}, err
			}
			if ok {
				*f.dst = Int(int(n))
			}
		}
	}
	if raw, ok := fields["registrationTimeUTC"]; ok {
		if out.RegistrationTimeUTC, _, err = readInteger("registrationTimeUTC", raw, 64); err != nil {
			return Instance{}, err
		}
	}
	if p := bytes.TrimSpace(fields["payload"]); len(p) > 0 && string(p) != "null" {
		if err := checkPayload(p); err != nil {
			return Instance{}, err
		}
		out.Payload = json.RawMessage(bytes.Clone(p))
	}
	if raw, ok := fields["serviceType"]; ok {
		if out.ServiceType, err = readServiceType(raw); err != nil {
			return Instance{}, err
		}
	}
	if raw, ok := fields["uriSpec"]; ok {
		if out.URISpec, err = readURISpec(raw); err != nil {
			return Instance{}, err
		}
	}
	if raw, ok := fields["enabled"]; ok {
		b, err := readBool("enabled", raw)
		if err != nil {
			return Instance{}, err
		}
		out.Enabled = Bool(b)
	}
	return out, nil
}

// checkPayload refuses the payloads no Curator reader can read, whatever
// its classes: a bare array, an "@class" that is not a string.
func checkPayload(p []byte) error {
	switch jsonKind(p) {
	case '[':
		if !typedArray(p) {
			return fmt.Errorf("%w: payload is a bare JSON array (Jackson expects [\"class\", value])", ErrMalformed)
		}
	case '{':
		var tag struct {
			Class json.RawMessage `json:"@class"`
		}
		if err := json.Unmarshal(p, &tag); err != nil {
			return fmt.Errorf("%w: payload: %w", ErrMalformed, err)
		}
		if tag.Class != nil && jsonKind(tag.Class) != '"' {
			return fmt.Errorf("%w: payload \"@class\" is not a string: %s", ErrMalformed, tag.Class)
		}
	}
	return nil
}
