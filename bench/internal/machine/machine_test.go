package machine

import "testing"

func TestCommandLine(t *testing.T) {
	got := CommandLine("./bench/cmd/x", []string{"-md", "docs/x.md", "-note", "it's loud", ""})
	want := `go run ./bench/cmd/x -md docs/x.md -note 'it'\''s loud' ''`
	if got != want {
		t.Fatalf("CommandLine = %s\nwant %s", got, want)
	}
}

func TestCPUModel(t *testing.T) {
	if CPUModel() == "" {
		t.Fatal("empty CPU model")
	}
}
