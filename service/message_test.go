package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
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
				if json.Unmarshal(raw, &s) != nil || !utf8.Valid(raw) || !pairedSurrogates(raw) {
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

// pairedSurrogates reports whether the JSON string literal lit, valid,
// decodes to UTF-16 code units in which every surrogate is paired: the
// reference for decodeString's refusal of lone surrogates.
func pairedSurrogates(lit []byte) bool {
	var units []uint16
	in := string(lit[1 : len(lit)-1])
	for len(in) > 0 {
		if in[0] == '\\' && in[1] == 'u' {
			n, _ := strconv.ParseUint(in[2:6], 16, 16)
			units = append(units, uint16(n))
			in = in[6:]
			continue
		}
		r, size := utf8.DecodeRuneInString(in)
		if in[0] == '\\' {
			size = 2 // an escape other than \u: a character outside the surrogates
		}
		units = utf16.AppendRune(units, r)
		in = in[size:]
	}
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		switch {
		case u >= 0xdc00 && u < 0xe000:
			return false
		case u >= 0xd800 && u < 0xdc00:
			if i+1 == len(units) || units[i+1] < 0xdc00 || units[i+1] >= 0xe000 {
				return false
			}
			i++
		}
	}
	return true
}

// An id must decode to one byte string: ids that are not UTF-8, or that
// escape a lone surrogate, which a JSON decoder turns into U+FFFD, are
// refused; a U+FFFD written as such, or a surrogate pair, is not.
func TestMessageIDEncoding(t *testing.T) {
	for _, tc := range []struct {
		lit, want string // want "": refused
	}{
		{`"plain"`, "plain"},
		{`"caf\u00e9"`, "café"},
		{`"\ud83d\ude00"`, "😀"},
		{"\"\\uFFFD and \\ufffd and \ufffd\"", "\ufffd and \ufffd and \ufffd"}, // escaped twice, then written as is
		{`"\\ud800"`, `\ud800`},
		{"\"\xff\"", ""},
		{"\"a\xfe\xffb\"", ""},
		{`"\ud800"`, ""},
		{`"\ud800x"`, ""},
		{`"\udc00\ud800"`, ""},
		{`"\ud800\u0041"`, ""},
		{`"x\ude00"`, ""},
	} {
		got, err := decodeString([]byte(tc.lit))
		switch {
		case tc.want == "" && !errors.Is(err, errBadIDEncoding):
			t.Errorf("%s: %q, %v; want errBadIDEncoding", tc.lit, got, err)
		case tc.want != "" && (err != nil || string(got) != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.lit, got, err, tc.want)
		}
		if ref := utf8.Valid([]byte(tc.lit)) && pairedSurrogates([]byte(tc.lit)); ref != (tc.want != "") {
			t.Errorf("%s: the reference says %v", tc.lit, ref)
		}
	}
}

func FuzzParseMessages(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","entry":1}`,
		` [ {"entry": {"x": [1, "]}\"", null]}, "id": "b\u00e9\\"} , {"id":"c","entry":true} ] `,
		`[]`, `{}`, `[1]`, `{"id":1,"entry":2}`, `{"id":"a","id":"b","entry":1}`,
		`{"i\u0064":"a","entry":"\\\\"}`, `{"id":"a","entry":1,"x":2}`, `{"id":"a","entry":1} 2`,
		"{\"id\":\"\xff\",\"entry\":\"\xfe\"}",
		`{"id":"\ud800","entry":1}`, `{"id":"\ud83d\ude00\ufffd","entry":1}`,
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
