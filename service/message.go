package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// A message is the articles' JSON write: {"id": "...", "entry": <any JSON>}.
// POST /v1/entries takes one message or an array of them.

var (
	errNotMessages   = errors.New(`the body must be a JSON object {"id": "...", "entry": ...} or an array of them`)
	errUnknownField  = errors.New(`unknown field in a message: only "id" and "entry" are allowed`)
	errDuplicate     = errors.New(`a message has the same field twice`)
	errIDNotString   = errors.New(`a message's "id" must be a JSON string`)
	errMissingID     = errors.New(`a message lacks "id"`)
	errMissingEntry  = errors.New(`a message lacks "entry"`)
	errBadIDEncoding = errors.New(`a message's "id" could not be decoded`)
)

// parseMessages calls fn with the id and the raw JSON entry of each message
// in body, in order, and stops at the first error (its own or fn's). body
// must already be valid JSON (json.Valid): the walk relies on it and does
// not re-check the syntax. The slices passed to fn alias body, except an id
// with escape sequences, which is decoded into a new slice.
func parseMessages(body []byte, fn func(id, entry []byte) error) error {
	i := skipSpace(body, 0)
	if i == len(body) {
		return errNotMessages
	}
	if body[i] == '{' {
		return parseMessage(body, i, fn)
	}
	if body[i] != '[' {
		return errNotMessages
	}
	i = skipSpace(body, i+1)
	if body[i] == ']' {
		return nil
	}
	for {
		if body[i] != '{' {
			return errNotMessages
		}
		end := skipValue(body, i)
		if err := parseMessage(body[:end], i, fn); err != nil {
			return err
		}
		i = skipSpace(body, end)
		if body[i] == ']' {
			return nil
		}
		i = skipSpace(body, i+1) // the comma
	}
}

// parseMessage parses the object starting at body[i] and ending at the end
// of body (after optional space).
func parseMessage(body []byte, i int, fn func(id, entry []byte) error) error {
	var id, entry []byte
	var haveID, haveEntry bool
	i = skipSpace(body, i+1)
	for body[i] != '}' {
		// A member: "name" : value
		nameEnd := skipValue(body, i)
		name := body[i+1 : nameEnd-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var err error
			if name, err = decodeString(body[i:nameEnd]); err != nil {
				return errUnknownField // a name that does not decode is neither id nor entry
			}
		}
		i = skipSpace(body, nameEnd)
		i = skipSpace(body, i+1) // the colon
		valEnd := skipValue(body, i)
		val := body[i:valEnd]
		switch string(name) {
		case "id":
			if haveID {
				return errDuplicate
			}
			haveID = true
			if val[0] != '"' {
				return errIDNotString
			}
			var err error
			if id, err = decodeString(val); err != nil {
				return err
			}
		case "entry":
			if haveEntry {
				return errDuplicate
			}
			haveEntry = true
			entry = val
		default:
			return errUnknownField
		}
		i = skipSpace(body, valEnd)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	switch {
	case !haveID:
		return errMissingID
	case !haveEntry:
		return errMissingEntry
	}
	return fn(id, entry)
}

// decodeString returns the contents of the JSON string literal s (quotes
// included): the bytes between the quotes when there is no escape sequence,
// else the decoded string. An id is a key, so it must decode to exactly one
// byte string: bytes that are not UTF-8 (which JSON does not allow) and
// escapes of lone surrogates (\ud800), which a decoder would both turn
// into U+FFFD, are refused rather than stored under that character.
func decodeString(s []byte) ([]byte, error) {
	inner := s[1 : len(s)-1]
	if !utf8.Valid(inner) {
		return nil, errBadIDEncoding
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil
	}
	var str string
	if err := json.Unmarshal(s, &str); err != nil {
		return nil, errBadIDEncoding
	}
	if loneSurrogate(inner) {
		return nil, errBadIDEncoding
	}
	return []byte(str), nil
}

// loneSurrogate reports whether the JSON string contents s, which the
// caller has decoded without error, escape half of a surrogate pair alone.
func loneSurrogate(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++ // the escaped character
		if s[i] != 'u' {
			continue
		}
		r := hex4(s[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xdc00 && r < 0xe000:
			return true // a low half first
		case r >= 0xd800 && r < 0xdc00:
			if i+6 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' {
				return true
			}
			if lo := hex4(s[i+3 : i+7]); lo < 0xdc00 || lo >= 0xe000 {
				return true
			}
			i += 6
		}
	}
	return false
}

// hex4 returns the value of four hexadecimal digits.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just after the JSON value starting at b[i],
// which must be valid.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// skipString returns the index just after the string literal at b[i].
func skipString(b []byte, i int) int {
	i++
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		// The quote is escaped if an odd number of backslashes precede it.
		n := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
		i++
	}
}
