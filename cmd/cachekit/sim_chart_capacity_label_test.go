package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// svgTexts returns the name of an SVG's root element and the character
// data of every <text> element in it, with how many times each occurs.
func svgTexts(t *testing.T, data []byte) (root string, texts map[string]int) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	texts = map[string]int{}
	inText := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return root, texts
		}
		if err != nil {
			t.Fatalf("invalid XML: %v\n%s", err, data)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts[string(tok)]++
			}
		}
	}
}

// The chart's capacity axis labelled each capacity through float64, so a
// capacity above 2^53 was labelled with another number: -capacity
// 9007199254740993 (2^53+1, which the table, CSV and JSON print exactly)
// got the tick label "9007199254740992". Labels come from the integers
// now. The trace is fixed and LRU deterministic. (Found by a review
// helper.)
func TestChartLabelsCapacityExactly(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.txt")
	if err := os.WriteFile(trace, []byte("1\n2\n3\n1\n4\n1\n2\n5\n1\n2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(dir, "c.svg")
	const capacity = "9007199254740993" // 2^53 + 1
	code, out, errOut := runSim(t, "-trace", trace, "-capacity", capacity, "-policy", "lru",
		"-format", "csv", "-chart", chart)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !bytes.Contains([]byte(out), []byte(","+capacity+",lru,")) {
		t.Fatalf("CSV lacks the capacity %s:\n%s", capacity, out)
	}
	data, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	_, texts := svgTexts(t, data)
	if texts[capacity] == 0 {
		var labels []string
		for s := range texts {
			if len(s) > 10 && s[0] >= '0' && s[0] <= '9' {
				labels = append(labels, s)
			}
		}
		t.Errorf("the chart has no tick label %q; its long numeric labels: %q", capacity, labels)
	}
}
