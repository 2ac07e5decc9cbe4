package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// stdMessage decodes one message object with encoding/json's map decoding
// (duplicates: last wins; which parseMessages refuses: dup reports them).
func stdMessage(obj []byte) (p parsed, ok, dup bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return p, false, false
	}
	// Count the members with a decoder to see duplicates.
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.Token()
	n := 0
	for dec.More() {
		dec.Token()
		var skip json.RawMessage
		dec.Decode(&skip)
		n++
	}
	dup = n != len(m)
	idRaw, hasID := m["id"]
	entry, hasEntry := m["entry"]
	if len(m) != 2 || !hasID || !hasEntry || idRaw[0] != '"' {
		return p, false, dup
	}
	var id string
	if json.Unmarshal(idRaw, &id) != nil || !utf8.Valid(idRaw) {
		return p, false, dup
	}
	// Lone surrogates decode to U+FFFD: more of them than the literal spells.
	lit := strings.ToLower(string(idRaw))
	if strings.Count(id, "\ufffd") > strings.Count(lit, "\ufffd")+strings.Count(lit, `\ufffd`) {
		return p, false, dup
	}
	return parsed{id, string(entry)}, true, dup
}

func FuzzParseMessagesStd(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","entry":1}`, `[{"id":"a","entry":{"x":"\"}"}},{"entry":[],"id":"\ud83d\ude00"}]`,
		`{"id":"a","id":"a","entry":1}`, `{"ID":"a","entry":1}`, `{"id":null,"entry":1}`, `{"id":"\ud800","entry":1}`,
		`[ ]`, ` { "id" : "\\\"" , "entry" : "\\" } `, `{"id":"\ufffd\ud800","entry":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) || !utf8.Valid(body) {
			return
		}
		var got []parsed
		err := parseMessages(body, func(id, entry []byte) error {
			got = append(got, parsed{string(id), string(entry)})
			return nil
		})
		var want []parsed
		wantOK, anyDup := true, false
		trimmed := bytes.TrimSpace(body)
		switch trimmed[0] {
		case '{':
			p, ok, dup := stdMessage(trimmed)
			want, wantOK, anyDup = []parsed{p}, ok, dup
		case '[':
			var elems []json.RawMessage
			json.Unmarshal(trimmed, &elems)
			for _, e := range elems {
				if e[0] != '{' {
					wantOK = false
					break
				}
				p, ok, dup := stdMessage(e)
				anyDup = anyDup || dup
				if !ok {
					wantOK = false
					break
				}
				want = append(want, p)
			}
		default:
			wantOK = false
		}
		if anyDup {
			if err == nil {
				t.Fatalf("%q: duplicate member accepted", body)
			}
			return
		}
		if wantOK != (err == nil) {
			t.Fatalf("%q: parseMessages error %v; encoding/json accepts: %v %q", body, err, wantOK, want)
		}
		if !wantOK {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d messages, encoding/json %d", body, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: message %d is %+v, encoding/json %+v", body, i, got[i], want[i])
			}
		}
		_ = errors.Is
	})
}
