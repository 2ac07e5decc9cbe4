// Command cachekit is the toolkit's command line. Subcommands:
//
//	cachekit serve  run the cache service (HTTP API over the byte cache)
//	cachekit load   send HTTP load to the service or any URL, report latencies
//	cachekit demo   run a small demonstration of the in-memory cache
//	cachekit sim    replay traces through eviction policies, compare hit ratios
//
// The command is a module of its own (github.com/cachekit/cachekit/cmd/cachekit)
// so that its dependencies, such as gonum.org/v1/plot for the charts of
// cachekit sim, or the HDR histogram of cachekit load, stay out of the
// cachekit module.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "serve":
		return serveCmd(args[1:], stdout, stderr)
	case "load":
		return loadCmd(args[1:], stdout, stderr)
	case "demo":
		return demo(args[1:], stdout, stderr)
	case "sim":
		return simulate(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "cachekit: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: cachekit <command> [flags]

commands:
  serve   run the cache service (HTTP API over the byte cache)
  load    send HTTP load to the service or any URL and report latencies
  demo    run a small demonstration of the in-memory cache
  sim     replay traces through eviction policies and compare hit ratios
  help    show this help`)
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("cachekit "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
