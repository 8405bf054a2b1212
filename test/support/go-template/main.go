// A helper for test/unit/agent/template-go.test.ts: renders templates with Go's own text/template
// so the agent's renderer can be compared byte for byte. Standard library only (built offline at
// test time). Reads a JSON list of cases on stdin, writes a JSON list of {out, err} on stdout.
// The consul-template functions are written here as consul-template defines them (argument order
// for pipelines); `secret` returns the case's "secrets" entry for a path as a struct with Data.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"text/template"
)

type testCase struct {
	Name       string                            `json:"name"`
	Template   string                            `json:"template"`
	Data       interface{}                       `json:"data"`
	MissingKey string                            `json:"missingkey"`
	Left       string                            `json:"left"`
	Right      string                            `json:"right"`
	Secrets    map[string]map[string]interface{} `json:"secrets"`
	Env        map[string]string                 `json:"env"`
}

type result struct {
	Out string `json:"out"`
	Err string `json:"err"`
}

// Secret has the fields consul-template's dependency.Secret has.
type Secret struct {
	RequestID     string
	LeaseID       string
	LeaseDuration int
	Renewable     bool
	Data          map[string]interface{}
	Warnings      []string
}

func in(l, v interface{}) (bool, error) {
	lv := reflect.ValueOf(l)
	vv := reflect.ValueOf(v)
	switch lv.Kind() {
	case reflect.Array, reflect.Slice:
		for i := 0; i < lv.Len(); i++ {
			if reflect.DeepEqual(lv.Index(i).Interface(), vv.Interface()) {
				return true, nil
			}
		}
		return false, nil
	case reflect.String:
		if vv.Type() == lv.Type() && strings.Contains(lv.String(), vv.String()) {
			return true, nil
		}
		return false, nil
	case reflect.Map:
		return lv.MapIndex(vv).IsValid(), nil
	}
	return false, fmt.Errorf("contains: cannot check membership in %T", l)
}

func funcs(c testCase) template.FuncMap {
	return template.FuncMap{
		"secret": func(path string) (*Secret, error) {
			d, ok := c.Secrets[path]
			if !ok {
				return nil, nil
			}
			return &Secret{Data: d, LeaseDuration: 0}, nil
		},
		"base64Decode": func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", fmt.Errorf("base64Decode: %s", err)
			}
			return string(b), nil
		},
		"base64Encode": func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil },
		"toJSON": func(i interface{}) (string, error) {
			b, err := json.Marshal(i)
			if err != nil {
				return "", err
			}
			return string(bytes.TrimSpace(b)), nil
		},
		"toJSONPretty": func(m map[string]interface{}) (string, error) {
			b, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				return "", err
			}
			return string(bytes.TrimSpace(b)), nil
		},
		"parseJSON": func(s string) (interface{}, error) {
			if s == "" {
				return map[string]interface{}{}, nil
			}
			var data interface{}
			if err := json.Unmarshal([]byte(s), &data); err != nil {
				return nil, err
			}
			return data, nil
		},
		"env":       func(s string) string { return c.Env[s] },
		"trimSpace": strings.TrimSpace,
		"split": func(sep, s string) []string {
			s = strings.TrimSpace(s)
			if s == "" {
				return []string{}
			}
			return strings.Split(s, sep)
		},
		"join":       func(sep string, a []string) string { return strings.Join(a, sep) },
		"contains":   func(v, l interface{}) (bool, error) { return in(l, v) },
		"replaceAll": func(f, t, s string) string { return strings.Replace(s, f, t, -1) },
		"toLower":    strings.ToLower,
		"toUpper":    strings.ToUpper,
	}
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := make([]result, 0, len(cases))
	for _, c := range cases {
		t := template.New(c.Name).Funcs(funcs(c))
		if c.Left != "" || c.Right != "" {
			t = t.Delims(c.Left, c.Right)
		}
		if c.MissingKey != "" {
			t = t.Option("missingkey=" + c.MissingKey)
		}
		var r result
		parsed, err := t.Parse(c.Template)
		if err != nil {
			r.Err = err.Error()
		} else {
			var buf bytes.Buffer
			if err := parsed.Execute(&buf, c.Data); err != nil {
				r.Err = err.Error()
			}
			r.Out = buf.String()
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
}
