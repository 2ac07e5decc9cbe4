package hitratio

import (
	"slices"
	"strings"
	"testing"
)

// A table's delimiter row may align its columns (":---", ":-:") or use a
// single dash: it is not a row of the suite. With an aligned first column
// it was read as a trace whose capacities are "---:", an error.
func TestReadmeSuiteAlignedDelimiterRow(t *testing.T) {
	for _, delim := range []string{"|:---|---:|", "| :-: | :-: |", "|-|-|", "|:--|--|"} {
		readme := "# traces\n\n| trace | capacities |\n" + delim + "\n| a | 10 / 20 |\n| b | 5 |\n\nafter\n"
		got, err := ReadmeSuite(strings.NewReader(readme))
		if err != nil {
			t.Errorf("delimiter row %q: %v", delim, err)
			continue
		}
		if len(got) != 2 || !slices.Equal(got["a"], []int{10, 20}) || !slices.Equal(got["b"], []int{5}) {
			t.Errorf("delimiter row %q: suite %v", delim, got)
		}
	}
}
