package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ServiceType is Curator's ServiceType: it decides the node's create mode.
type ServiceType string

// Curator's four service types. The zero value is written as JSON null
// (Curator's reading of a missing type); Register treats it as Dynamic.
const (
	// Dynamic instances live in an EPHEMERAL node: they go with the session
	// (and are registered again, by this package, in the next one).
	Dynamic ServiceType = "DYNAMIC"
	// Static instances live in a PERSISTENT node.
	Static ServiceType = "STATIC"
	// Permanent instances live in a PERSISTENT node.
	Permanent ServiceType = "PERMANENT"
	// DynamicSequential instances live in an EPHEMERAL_SEQUENTIAL node
	// named <id><10-digit sequence>.
	DynamicSequential ServiceType = "DYNAMIC_SEQUENTIAL"
)

// valid reports whether t is one of Curator's types (or the zero value).
func (t ServiceType) valid() bool {
	switch t {
	case "", Dynamic, Static, Permanent, DynamicSequential:
		return true
	}
	return false
}

// persistent reports whether instances of type t outlive their session.
func (t ServiceType) persistent() bool { return t == Static || t == Permanent }

// Instance is one registration of a service: Curator's ServiceInstance,
// every field of it. It marshals to and from the JSON Curator's
// JsonInstanceSerializer writes, byte for byte (see MarshalJSON).
type Instance struct {
	// Name is the service's name: the node <basePath>/<Name> holds its
	// instances. Required.
	Name string
	// ID identifies the instance within its service: the instance node's
	// name (for DynamicSequential, its prefix). Required.
	ID string
	// Address is the host or IP clients reach the instance at. Empty is
	// written as JSON null, as Curator writes an instance without one, and
	// null is read as empty.
	Address string
	// Port is the plain port, nil for none (JSON null).
	Port *int
	// SSLPort is the TLS port, nil for none (JSON "sslPort": null). When set,
	// the URI spec's {scheme} is "https".
	SSLPort *int
	// Payload is the instance's payload as raw JSON, kept exactly as read,
	// so a Java payload with Jackson's "@class" type tag survives a Go
	// round trip byte for byte; nil is JSON null. See ZookeeperInstance,
	// TypedPayload and DecodePayload for the common payloads.
	Payload json.RawMessage
	// RegistrationTimeUTC is the registration time, milliseconds since the
	// Unix epoch (Java's System.currentTimeMillis). Register sets it when
	// it is zero.
	RegistrationTimeUTC int64
	// ServiceType decides the node's mode; the zero value is Dynamic.
	ServiceType ServiceType
	// URISpec is the instance's URI template, nil for none (JSON null). See
	// ParseURISpec and URI.
	URISpec *URISpec
	// Enabled is Curator's "enabled" field (CURATOR-275): nil leaves it
	// out, as Curator's default, "compatible", serializer does; non-nil
	// writes it (Curator's other mode; see WithEnabledField). A missing
	// field reads as nil, which Curator takes as true. Providers skip
	// instances with Enabled false.
	Enabled *bool
}

// IsEnabled reports whether the instance is enabled: Enabled is nil or true.
func (i Instance) IsEnabled() bool { return i.Enabled == nil || *i.Enabled }

// URI builds the instance's URI from its URISpec with Curator's
// substitutions (see URISpec.Build); "" when it has none.
func (i Instance) URI(vars map[string]any) string {
	if i.URISpec == nil {
		return ""
	}
	return i.URISpec.Build(&i, vars)
}

// Int returns a pointer to v, for Port and SSLPort.
func Int(v int) *int { return &v }

// Bool returns a pointer to v, for Enabled.
func Bool(v bool) *bool { return &v }

// MarshalJSON writes the instance as Curator 5.4's JsonInstanceSerializer
// (Jackson 2.14) does, byte for byte: compact, the fields name, id,
// address, port, sslPort, payload, registrationTimeUTC, serviceType,
// uriSpec in that order, then enabled only when Enabled is set, strings
// escaped as Jackson escapes them. The payload is written compact, with
// its keys in their order and its strings escaped the same way: a payload
// Jackson wrote is written back unchanged. A payload that is not JSON is an
// error wrapping ErrInvalidInstance. (json.Marshal, unlike a json.Encoder
// with SetEscapeHTML(false), escapes '<', '>', '&', U+2028 and U+2029 in
// what MarshalJSON returns: call MarshalJSON for Jackson's bytes.)
func (i Instance) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 256+len(i.Payload))
	b = append(b, `{"name":`...)
	b = appendString(b, i.Name)
	b = append(b, `,"id":`...)
	b = appendString(b, i.ID)
	b = append(b, `,"address":`...)
	if i.Address == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, i.Address)
	}
	b = append(b, `,"port":`...)
	b = appendIntPtr(b, i.Port)
	b = append(b, `,"sslPort":`...)
	b = appendIntPtr(b, i.SSLPort)
	b = append(b, `,"payload":`...)
	if len(bytes.TrimSpace(i.Payload)) == 0 {
		b = append(b, "null"...)
	} else {
		p, err := canonicalJSON(i.Payload)
		if err != nil {
			return nil, fmt.Errorf("%w: service %q instance %q: payload: %w", ErrInvalidInstance, i.Name, i.ID, err)
		}
		b = append(b, p...)
	}
	b = append(b, `,"registrationTimeUTC":`...)
	b = strconv.AppendInt(b, i.RegistrationTimeUTC, 10)
	b = append(b, `,"serviceType":`...)
	if i.ServiceType == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, string(i.ServiceType))
	}
	b = append(b, `,"uriSpec":`...)
	if i.URISpec == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"parts":[`...)
		for k, p := range i.URISpec.Parts {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"value":`...)
			b = appendString(b, p.Value)
			b = append(b, `,"variable":`...)
			b = strconv.AppendBool(b, p.Variable)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	if i.Enabled != nil {
		b = append(b, `,"enabled":`...)
		b = strconv.AppendBool(b, *i.Enabled)
	}
	return append(b, '}'), nil
}

func appendIntPtr(b []byte, v *int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*v), 10)
}

// UnmarshalJSON reads Curator's ServiceInstance JSON, either serializer
// mode, as Curator 5.4 (Jackson 2.14 at its default settings) reads it:
// what Jackson coerces is read the same way ("port":"8080", 8080.0, a
// string registrationTimeUTC, a serviceType index...; jacksonread.go lists
// the rules), a missing field takes ServiceInstance's default (a missing
// serviceType is Dynamic, a missing "enabled" nil, which is true), unknown
// fields are ignored. The payload is kept as the exact bytes read. What
// Jackson refuses (not an object, a field of a shape it cannot coerce, a
// number outside Java's range, an unknown service type) is an error
// wrapping ErrMalformed.
func (i *Instance) UnmarshalJSON(data []byte) error {
	out, err := decodeInstance(data)
	if err != nil {
		return err
	}
	*i = out
	return nil
}

// Decode reads an instance node's data; errors wrap ErrMalformed.
func Decode(data []byte) (Instance, error) {
	var i Instance
	err := i.UnmarshalJSON(data)
	return i, err
}

// validate checks what Register and Update need of an instance.
func (i Instance) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: service %q instance %q: %s", ErrInvalidInstance, i.Name, i.ID, fmt.Sprintf(format, args...))
	}
	if err := segment(i.Name); err != nil {
		return bad("name: %v", err)
	}
	if err := segment(i.ID); err != nil {
		return bad("id: %v", err)
	}
	if !i.ServiceType.valid() {
		return bad("unknown service type %q", i.ServiceType)
	}
	for _, p := range []*int{i.Port, i.SSLPort} {
		if p != nil && (*p < math.MinInt32 || *p > math.MaxInt32) {
			return bad("port %d is outside Java's int", *p)
		}
	}
	if p := bytes.TrimSpace(i.Payload); len(p) > 0 {
		if !json.Valid(p) {
			return bad("payload is not JSON")
		}
		if p[0] == '[' && !typedArray(p) {
			// Jackson reads a payload through @JsonTypeInfo: an array must
			// be its wrapper, ["java.class.Name", value].
			return bad("payload is a bare JSON array, which Curator cannot read (use [\"class\", [...]])")
		}
	}
	return nil
}

// typedArray reports whether p is Jackson's array type wrapper
// ["class", value].
func typedArray(p []byte) bool {
	var a []json.RawMessage
	if json.Unmarshal(p, &a) != nil || len(a) != 2 {
		return false
	}
	var s string
	return json.Unmarshal(a[0], &s) == nil
}

// segment checks a service name or instance id: one non-empty path segment.
func segment(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty")
	case strings.Contains(s, "/"):
		return fmt.Errorf("%q contains '/'", s)
	case s == "." || s == "..":
		return fmt.Errorf("%q is not a node name", s)
	}
	return validName(s)
}
