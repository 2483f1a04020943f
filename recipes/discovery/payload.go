package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// The "@class" tags of the payloads Spring Cloud Zookeeper and Apache Dubbo
// register.
const (
	SpringCloudClass = "org.springframework.cloud.zookeeper.discovery.ZookeeperInstance"
	DubboClass       = "org.apache.dubbo.registry.zookeeper.ZookeeperInstance"
)

// ZookeeperInstance is the payload Spring Cloud Zookeeper and Apache Dubbo
// register (both name their class ZookeeperInstance and give it the same
// three fields): {"@class":..., "id":..., "name":..., "metadata":{...}}.
// Spring Cloud keeps the instance status in Metadata["instance_status"]
// ("UP", "OUT_OF_SERVICE"; missing means UP).
type ZookeeperInstance struct {
	// Class is the "@class" tag: SpringCloudClass or DubboClass.
	Class string
	// ID is the payload's id (Spring: the application context id; Dubbo:
	// host:port or null). Empty is written as null.
	ID string
	// Name is the service name.
	Name string
	// Metadata is the instance's metadata; nil is written as {}.
	Metadata map[string]string
}

// MarshalJSON writes the payload as Jackson does: "@class", "id", "name",
// "metadata" in that order (metadata keys sorted: Java's HashMap order
// cannot be reproduced, and Java reads either).
func (z ZookeeperInstance) MarshalJSON() ([]byte, error) {
	b := []byte(`{"@class":`)
	b = appendString(b, z.Class)
	b = append(b, `,"id":`...)
	if z.ID == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, z.ID)
	}
	b = append(b, `,"name":`...)
	b = appendString(b, z.Name)
	b = append(b, `,"metadata":{`...)
	keys := make([]string, 0, len(z.Metadata))
	for k := range z.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for n, k := range keys {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, z.Metadata[k])
	}
	return append(b, "}}"...), nil
}

// UnmarshalJSON reads the payload; a null id or metadata reads as empty.
func (z *ZookeeperInstance) UnmarshalJSON(data []byte) error {
	var w struct {
		Class    string            `json:"@class"`
		ID       *string           `json:"id"`
		Name     *string           `json:"name"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*z = ZookeeperInstance{Class: w.Class, Metadata: w.Metadata}
	if w.ID != nil {
		z.ID = *w.ID
	}
	if w.Name != nil {
		z.Name = *w.Name
	}
	return nil
}

// SpringCloudPayload returns the payload Spring Cloud Zookeeper registers
// for an instance of service name (id is its application context id,
// usually "application-1").
func SpringCloudPayload(id, name string, metadata map[string]string) json.RawMessage {
	b, _ := ZookeeperInstance{Class: SpringCloudClass, ID: id, Name: name, Metadata: metadata}.MarshalJSON()
	return b
}

// DubboPayload returns the payload Apache Dubbo's service discovery
// registers for an instance of application name (id is usually
// "host:port").
func DubboPayload(id, name string, metadata map[string]string) json.RawMessage {
	b, _ := ZookeeperInstance{Class: DubboClass, ID: id, Name: name, Metadata: metadata}.MarshalJSON()
	return b
}

// ZookeeperInstance decodes the instance's payload as Spring Cloud's or
// Dubbo's ZookeeperInstance; an error if there is no payload or it is not
// an object.
func (i Instance) ZookeeperInstance() (ZookeeperInstance, error) {
	var z ZookeeperInstance
	if len(i.Payload) == 0 {
		return z, fmt.Errorf("service %q instance %q: no payload", i.Name, i.ID)
	}
	if err := json.Unmarshal(i.Payload, &z); err != nil {
		return z, fmt.Errorf("service %q instance %q: payload: %w", i.Name, i.ID, err)
	}
	return z, nil
}

// TypedPayload returns v's JSON with Jackson's type tag "@class": class
// first, as Jackson writes it, so that a Java reader deserializes the
// payload as that class. v must marshal to a JSON object (a struct or a
// map); class "" leaves the tag out (Java then reads a map).
func TypedPayload(class string, v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	raw, err = canonicalJSON(raw)
	if err != nil {
		return nil, err
	}
	if len(raw) < 2 || raw[0] != '{' {
		return nil, fmt.Errorf("%w: typed payload of %T is not a JSON object", ErrInvalidInstance, v)
	}
	if class == "" {
		return raw, nil
	}
	b := appendString([]byte(`{"@class":`), class)
	if !bytes.Equal(raw, []byte("{}")) {
		b = append(b, ',')
	}
	return append(b, raw[1:]...), nil
}

// PayloadClass returns the payload's "@class" tag, "" if it has none.
func (i Instance) PayloadClass() string {
	var w struct {
		Class string `json:"@class"`
	}
	if len(i.Payload) == 0 || i.Payload[0] != '{' || json.Unmarshal(i.Payload, &w) != nil {
		return ""
	}
	return w.Class
}

// DecodePayload unmarshals the instance's payload into v as Jackson reads
// it: Jackson's type tag is not part of the value. "@class" is left out
// of a map (and of the map an `any` receives) and goes only into a
// struct field made for it (`json:"@class"`); a typed array wrapper
// ["java.class.Name", value] decodes as its value. An error if there is
// no payload or it does not fit v (v is then as json.Unmarshal leaves it).
func (i Instance) DecodePayload(v any) error {
	if len(i.Payload) == 0 {
		return fmt.Errorf("service %q instance %q: no payload", i.Name, i.ID)
	}
	p := bytes.TrimSpace(i.Payload)
	if len(p) > 0 && p[0] == '[' && typedArray(p) {
		var a []json.RawMessage
		_ = json.Unmarshal(p, &a) // typedArray has checked it
		p = a[1]
	}
	if err := json.Unmarshal(p, v); err != nil {
		return fmt.Errorf("service %q instance %q: payload: %w", i.Name, i.ID, err)
	}
	dropClassKey(reflect.ValueOf(v))
	return nil
}

// dropClassKey deletes "@class" from the map v points to, directly or
// through an interface: the key json.Unmarshal put there from the tag.
func dropClassKey(v reflect.Value) {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Map || v.IsNil() || v.Type().Key().Kind() != reflect.String {
		return
	}
	v.SetMapIndex(reflect.ValueOf(classKey).Convert(v.Type().Key()), reflect.Value{})
}

// classKey is Jackson's type tag property.
const classKey = "@class"
