package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

type parsed struct{ id, entry string }

// refParse is parseMessages written with encoding/json's tokenizer, as a
// reference: the messages, or false if body is not acceptable.
func refParse(body []byte) ([]parsed, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, false
	}
	var out []parsed
	object := func() bool {
		var p parsed
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			key, isString := k.(string)
			if err != nil || !isString || seen[key] {
				return false
			}
			seen[key] = true
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return false
			}
			switch key {
			case "id":
				var s string
				if json.Unmarshal(raw, &s) != nil {
					return false
				}
				p.id = s
			case "entry":
				p.entry = string(raw)
			default:
				return false
			}
		}
		if _, err := dec.Token(); err != nil || !seen["id"] || !seen["entry"] {
			return false
		}
		out = append(out, p)
		return true
	}
	switch tok {
	case json.Delim('{'):
		if !object() {
			return nil, false
		}
	case json.Delim('['):
		for dec.More() {
			if t, err := dec.Token(); err != nil || t != json.Delim('{') || !object() {
				return nil, false
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // trailing data
	}
	return out, true
}

func FuzzParseMessages(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","entry":1}`,
		` [ {"entry": {"x": [1, "]}\"", null]}, "id": "b\u00e9\\"} , {"id":"c","entry":true} ] `,
		`[]`, `{}`, `[1]`, `{"id":1,"entry":2}`, `{"id":"a","id":"b","entry":1}`,
		`{"i\u0064":"a","entry":"\\\\"}`, `{"id":"a","entry":1,"x":2}`, `{"id":"a","entry":1} 2`,
		"{\"id\":\"\xff\",\"entry\":\"\xfe\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return // the server refuses it before parsing
		}
		var got []parsed
		err := parseMessages(body, func(id, entry []byte) error {
			got = append(got, parsed{string(id), string(entry)})
			return nil
		})
		want, ok := refParse(body)
		if ok != (err == nil) {
			t.Fatalf("%q: parseMessages error %v, reference accepts: %v", body, err, ok)
		}
		if !ok {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d messages, reference %d", body, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: message %d is %+v, reference %+v", body, i, got[i], want[i])
			}
		}
	})
}
