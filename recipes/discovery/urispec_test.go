package discovery_test

import (
	"reflect"
	"testing"

	"github.com/gocurator/curator/recipes/discovery"
)

// Parsing follows Curator's UriSpec: java.util.StringTokenizer on "{}"
// (no empty tokens), variable names trimmed.
func TestParseURISpec(t *testing.T) {
	v := func(s string) discovery.URIPart { return discovery.URIPart{Value: s, Variable: true} }
	l := func(s string) discovery.URIPart { return discovery.URIPart{Value: s} }
	for _, tt := range []struct {
		spec    string
		want    []discovery.URIPart
		wantErr bool
	}{
		{"{scheme}://{address}:{port}", []discovery.URIPart{v("scheme"), l("://"), v("address"), l(":"), v("port")}, false},
		{"http://example.com", []discovery.URIPart{l("http://example.com")}, false},
		{"{ port }", []discovery.URIPart{v("port")}, false},
		{"a{}b", []discovery.URIPart{l("a"), l("b")}, false},
		{"{ }", []discovery.URIPart{v("")}, false},
		{"{[}x{]}", []discovery.URIPart{v("["), l("x"), v("]")}, false},
		{"", nil, false},
		{"{a{b}}", nil, true},
		{"a}", nil, true},
		{"{port", nil, true},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			u, err := discovery.ParseURISpec(tt.spec)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseURISpec(%q) = %+v, want an error", tt.spec, u)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(u.Parts, tt.want) {
				t.Fatalf("parts = %#v, want %#v", u.Parts, tt.want)
			}
		})
	}
}

// Building follows Curator's UriSpec.build: the caller's variables first,
// then the instance's fields, "http"/"https" for scheme, braces, and
// nothing for an unknown variable.
func TestURISpecBuild(t *testing.T) {
	plain := discovery.Instance{Name: "orders", ID: "i-1", Address: "10.0.0.7", Port: discovery.Int(8080),
		RegistrationTimeUTC: 42, ServiceType: discovery.DynamicSequential}
	tls := plain
	tls.SSLPort = discovery.Int(8443)
	for _, tt := range []struct {
		name string
		spec string
		inst *discovery.Instance
		vars map[string]any
		want string
	}{
		{"default", "{scheme}://{address}:{port}", &plain, nil, "http://10.0.0.7:8080"},
		{"https with an ssl port", "{scheme}://{address}:{ssl-port}", &tls, nil, "https://10.0.0.7:8443"},
		{"every field", "{name}/{id}/{registration-time-utc}/{service-type}", &plain, nil, "orders/i-1/42/dynamic_sequential"},
		{"no port", "{address}:{port}", &discovery.Instance{Address: "h"}, nil, "h:"},
		{"unknown variable left out", "a{nope}b", &plain, nil, "ab"},
		{"caller's variables first", "{scheme}://{address}/{path}", &plain, map[string]any{"scheme": "grpc", "path": 7}, "grpc://10.0.0.7/7"},
		{"nil variable left out", "{address}", &plain, map[string]any{"address": nil}, ""},
		{"braces", "{[}{id}{]}", &plain, nil, "{i-1}"},
		{"no instance", "{scheme}://{address}", nil, nil, "http://"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := discovery.MustParseURISpec(tt.spec).Build(tt.inst, tt.vars); got != tt.want {
				t.Fatalf("Build = %q, want %q", got, tt.want)
			}
		})
	}
	inst := plain
	inst.URISpec = discovery.DefaultURISpec()
	if got := inst.URI(nil); got != "http://10.0.0.7:8080" {
		t.Fatalf("URI = %q", got)
	}
	if got := discovery.DefaultURISpec().String(); got != "{scheme}://{address}:{port}" {
		t.Fatalf("String = %q", got)
	}
}
