package discovery

import (
	"fmt"
	"strconv"
	"strings"
)

// The variables URISpec.Build fills from an instance, Curator's UriSpec
// fields.
const (
	FieldScheme              = "scheme"                // "http", or "https" when the instance has an SSLPort
	FieldName                = "name"                  // the instance's Name
	FieldID                  = "id"                    // its ID
	FieldAddress             = "address"               // its Address
	FieldPort                = "port"                  // its Port, "" for none
	FieldSSLPort             = "ssl-port"              // its SSLPort, "" for none
	FieldRegistrationTimeUTC = "registration-time-utc" // its RegistrationTimeUTC
	FieldServiceType         = "service-type"          // its ServiceType in lower case
	FieldOpenBrace           = "["                     // always "{"
	FieldCloseBrace          = "]"                     // always "}"
)

// URISpec is Curator's UriSpec: a URI template of literal parts and
// variables, such as "{scheme}://{address}:{port}". It is stored in the
// instance JSON as its parts.
type URISpec struct {
	Parts []URIPart
}

// URIPart is one part of a URISpec: a literal, or a variable's name.
type URIPart struct {
	Value    string
	Variable bool
}

// ParseURISpec parses a template as Curator's UriSpec does: text between
// '{' and '}' names a variable (trimmed of spaces and control characters,
// as Java's String.trim), everything else is literal; "{}" adds nothing.
// A '{' inside a variable, a '}' outside one, or an unclosed '{' is an
// error, as in Curator. "{[}" and "{]}" stand for literal braces.
func ParseURISpec(spec string) (*URISpec, error) {
	u := &URISpec{}
	inside := false
	for rest := spec; rest != ""; {
		k := strings.IndexAny(rest, "{}")
		if k < 0 {
			k = len(rest)
		}
		if k > 0 {
			tok := rest[:k]
			if inside {
				tok = strings.TrimFunc(tok, func(r rune) bool { return r <= ' ' })
			}
			u.Parts = append(u.Parts, URIPart{Value: tok, Variable: inside})
			rest = rest[k:]
			continue
		}
		switch rest[0] {
		case '{':
			if inside {
				return nil, fmt.Errorf("uri spec %q: { is not allowed inside of a variable specification", spec)
			}
			inside = true
		case '}':
			if !inside {
				return nil, fmt.Errorf("uri spec %q: } must be preceded by {", spec)
			}
			inside = false
		}
		rest = rest[1:]
	}
	if inside {
		return nil, fmt.Errorf("uri spec %q: final variable not closed - expected }", spec)
	}
	return u, nil
}

// MustParseURISpec is ParseURISpec that panics on error, for templates
// written in the program.
func MustParseURISpec(spec string) *URISpec {
	u, err := ParseURISpec(spec)
	if err != nil {
		panic(err)
	}
	return u
}

// DefaultURISpec is "{scheme}://{address}:{port}", the spec Spring Cloud
// Zookeeper registers by default.
func DefaultURISpec() *URISpec { return MustParseURISpec("{scheme}://{address}:{port}") }

// String returns the template the spec was parsed from (variables in
// braces; a literal brace in a literal part cannot be parsed back).
func (u *URISpec) String() string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range u.Parts {
		if p.Variable {
			b.WriteString("{" + p.Value + "}")
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// Build fills the template as Curator's UriSpec.build does: literal parts
// as they are, each variable from vars if it is there (values are written
// with fmt's %v), else from inst (see the Field constants; inst may be
// nil), else "scheme" is "http" and "[" and "]" are braces; a variable
// found nowhere is left out.
func (u *URISpec) Build(inst *Instance, vars map[string]any) string {
	if u == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range u.Parts {
		if !p.Variable {
			b.WriteString(p.Value)
			continue
		}
		if v, ok := vars[p.Value]; ok {
			if v != nil {
				fmt.Fprint(&b, v)
			}
			continue
		}
		if v, ok := builtin(p.Value, inst); ok {
			b.WriteString(v)
		}
	}
	return b.String()
}

func builtin(name string, inst *Instance) (string, bool) {
	switch name {
	case FieldOpenBrace:
		return "{", true
	case FieldCloseBrace:
		return "}", true
	case FieldScheme:
		if inst != nil && inst.SSLPort != nil {
			return "https", true
		}
		return "http", true
	}
	if inst == nil {
		return "", false
	}
	port := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	switch name {
	case FieldName:
		return inst.Name, true
	case FieldID:
		return inst.ID, true
	case FieldAddress:
		return inst.Address, true
	case FieldPort:
		return port(inst.Port), true
	case FieldSSLPort:
		return port(inst.SSLPort), true
	case FieldRegistrationTimeUTC:
		return strconv.FormatInt(inst.RegistrationTimeUTC, 10), true
	case FieldServiceType:
		return strings.ToLower(string(inst.ServiceType)), true
	}
	return "", false
}
