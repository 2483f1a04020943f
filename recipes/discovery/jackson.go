package discovery

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The JSON written here is the JSON Jackson (2.14, Curator 5.4's) writes,
// byte for byte, so that a Go registration and a Java registration of the
// same instance are the same node data: compact, fields in Curator's order,
// strings escaped as Jackson escapes them. Jackson escapes only '"', '\\'
// and the control characters below U+0020 (\b \t \n \f \r short, the others
// as \u00XX with upper-case hex), and writes a character beyond U+FFFF as
// its escaped UTF-16 surrogate pair; everything else, '<', '&', U+2028
// included, goes out as raw UTF-8 (encoding/json escapes those).

const upperHex = "0123456789ABCDEF"

// appendString appends s as a JSON string, escaped as Jackson escapes it.
// Invalid UTF-8 is written as U+FFFD, as Java would hold it.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c >= 0x20:
				b = append(b, c)
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\r':
				b = append(b, '\\', 'r')
			default:
				b = appendEscape(b, rune(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = utf8.AppendRune(b, utf8.RuneError)
		case r > 0xFFFF:
			r -= 0x10000
			b = appendEscape(b, 0xD800+(r>>10))
			b = appendEscape(b, 0xDC00+(r&0x3FF))
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func appendEscape(b []byte, r rune) []byte {
	return append(b, '\\', 'u', upperHex[r>>12&0xF], upperHex[r>>8&0xF], upperHex[r>>4&0xF], upperHex[r&0xF])
}

// canonicalJSON re-writes one JSON value as Jackson would write it: compact,
// object keys in their order, numbers as written, strings escaped as
// appendString does. It is the identity on Jackson's own output, so a
// payload read from a Java registration is written back unchanged.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out := make([]byte, 0, len(raw))
	out, err := canonicalValue(dec, out)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return out, nil
}

func canonicalValue(dec *json.Decoder, out []byte) ([]byte, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			out = append(out, '{')
			for first := true; dec.More(); first = false {
				if !first {
					out = append(out, ',')
				}
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				out = appendString(out, key.(string))
				out = append(out, ':')
				if out, err = canonicalValue(dec, out); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return append(out, '}'), nil
		case '[':
			out = append(out, '[')
			for first := true; dec.More(); first = false {
				if !first {
					out = append(out, ',')
				}
				if out, err = canonicalValue(dec, out); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return append(out, ']'), nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return appendString(out, t), nil
	case json.Number:
		return append(out, t...), nil
	case bool:
		if t {
			return append(out, "true"...), nil
		}
		return append(out, "false"...), nil
	case nil:
		return append(out, "null"...), nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
