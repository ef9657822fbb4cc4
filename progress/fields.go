package progress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A progress file is read field by field: a value that does not fit its
// place in the schema (a hand edit, another tool, a bug of an old learn)
// costs that value, not the whole file. decodeFields does what
// json.Unmarshal does, except that it goes on past such a value, leaves it
// out, and says where it was.

// setAside is one value of a progress file left out because it does not fit
// the schema: where it was, as the JSON names joined by dots
// ("sets.checkpoint.best"), and what it held.
type setAside struct {
	path string
	raw  json.RawMessage
}

// String is the path and, in parentheses, the value (cut to 40 bytes).
func (s setAside) String() string {
	var b bytes.Buffer
	v := s.raw
	if json.Compact(&b, s.raw) == nil {
		v = b.Bytes()
	}
	text := string(v)
	if len(text) > 40 {
		text = text[:37] + "…"
	}
	return fmt.Sprintf("%s (%s)", s.path, text)
}

// asideList names the values set aside for a notice: "a (1), b (\"x\")".
func asideList(lost []setAside) string {
	names := make([]string, len(lost))
	for i, l := range lost {
		names[i] = l.String()
	}
	return strings.Join(names, ", ")
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeFields decodes the JSON object data into v, a pointer to a struct,
// as json.Unmarshal would (field names matched exactly, else ignoring case;
// unknown names ignored), except that a struct field, map entry or slice
// element whose value does not fit its Go type is left out (a field keeps
// its zero value, an entry or element is dropped) and listed, sorted by
// path, while the rest is decoded. ok is false only when data is not a
// JSON object at all.
func decodeFields(data []byte, v any) (lost []setAside, ok bool) {
	if !decodeInto(data, reflect.ValueOf(v).Elem(), "", &lost) {
		return nil, false
	}
	slices.SortFunc(lost, func(a, b setAside) int { return strings.Compare(a.path, b.path) })
	return lost, true
}

// decodeInto decodes raw into rv (settable, holding its zero value) and
// reports whether raw had the shape of rv's type; what does not fit, here
// or below, is appended to lost under its path.
func decodeInto(raw json.RawMessage, rv reflect.Value, path string, lost *[]setAside) bool {
	t := rv.Type()
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return true // null leaves the zero value, as json.Unmarshal does
	}
	miss := func() bool {
		*lost = append(*lost, setAside{path, raw})
		return false
	}
	composite := t.Kind() == reflect.Pointer || t.Kind() == reflect.Struct ||
		t.Kind() == reflect.Map && t.Key().Kind() == reflect.String ||
		t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8
	if !composite || reflect.PointerTo(t).Implements(unmarshalerType) {
		nv := reflect.New(t)
		if json.Unmarshal(raw, nv.Interface()) != nil {
			return miss()
		}
		rv.Set(nv.Elem())
		return true
	}
	switch t.Kind() {
	case reflect.Pointer:
		nv := reflect.New(t.Elem())
		if !decodeInto(raw, nv.Elem(), path, lost) {
			return false
		}
		rv.Set(nv)
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return miss()
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			r, found := obj[name]
			for k, v := range obj {
				if !found && strings.EqualFold(k, name) {
					r, found = v, true
				}
			}
			if found {
				decodeInto(r, rv.Field(i), join(path, name), lost)
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return miss()
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		for k, r := range obj {
			ev := reflect.New(t.Elem()).Elem()
			if decodeInto(r, ev, join(path, k), lost) {
				m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
			}
		}
		rv.Set(m)
	case reflect.Slice:
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return miss()
		}
		s := reflect.MakeSlice(t, 0, len(arr))
		for i, r := range arr {
			ev := reflect.New(t.Elem()).Elem()
			if decodeInto(r, ev, fmt.Sprintf("%s[%d]", path, i), lost) {
				s = reflect.Append(s, ev)
			}
		}
		rv.Set(s)
	}
	return true
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// unknownFields returns the entries of the object obj that name no field
// of the struct type t as decodeFields matches them (exactly, else ignoring
// case), each as it was; nil when there are none.
func unknownFields(obj map[string]json.RawMessage, t reflect.Type) map[string]json.RawMessage {
	var unknown map[string]json.RawMessage
	for k, v := range obj {
		known := false
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			if f.IsExported() && name != "-" && strings.EqualFold(k, name) {
				known = true
				break
			}
		}
		if !known {
			if unknown == nil {
				unknown = map[string]json.RawMessage{}
			}
			unknown[k] = v
		}
	}
	return unknown
}
