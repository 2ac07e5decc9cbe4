// Command svcbench runs the service benchmark of docs/benchmarks/service.md
// and writes that document: it builds the cachekit command, starts
// `cachekit serve`, drives it with `cachekit load` in separate processes
// (the articles' workload, a read-your-writes run and a rate sweep), and
// renders every figure from the load generator's JSON reports, the
// processes' CPU times and the service's /v1/stats.
//
//	cd cmd/cachekit && go run ./internal/svcbench -md ../../docs/benchmarks/service.md -json ../../docs/benchmarks/service.json
//
// It needs Linux (/proc) and a free loopback port; -pin runs the server and
// the load generator on separate cores with taskset.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cachekit/cachekit/cmd/cachekit/internal/load"
	"github.com/cachekit/cachekit/internal/atomicfile"
	"github.com/cachekit/cachekit/service"
)

type config struct {
	Entries     int           `json:"entries"`
	ValueSize   int           `json:"value_size"`
	Duration    time.Duration `json:"-"`
	SweepFor    time.Duration `json:"-"`
	Rates       []int         `json:"sweep_rates"`
	Concurrency int           `json:"concurrency"`
	Pin         bool          `json:"pinned"`
	MaxBytes    string        `json:"max_bytes"`
	GOGC        string        `json:"gogc,omitempty"`
	Floor       bool          `json:"floor"`
}

// phase is one run of the load generator and what was measured around it.
type phase struct {
	Name         string          `json:"name"`
	Args         []string        `json:"args"`
	Report       json.RawMessage `json:"report"`
	ServerCPU    float64         `json:"server_cpu_seconds"`
	ClientCPU    float64         `json:"client_cpu_seconds"`
	LoadBefore   string          `json:"loadavg_before"`
	LoadAfter    string          `json:"loadavg_after"`
	Stats        json.RawMessage `json:"stats_after"`
	ServerRSS    int64           `json:"server_rss_bytes"`
	ServerHWM    int64           `json:"server_rss_peak_bytes"`
	report       load.Report
	stats        serviceStats
	serverUsPerR float64
	clientUsPerR float64
}

// serviceStats is the part of GET /v1/stats this command reads.
type serviceStats struct {
	Store struct {
		Entries     int64 `json:"entries"`
		Evictions   int64 `json:"evictions"`
		Expirations int64 `json:"expirations"`
		BytesLive   int64 `json:"bytes_live"`
		BytesMax    int64 `json:"bytes_max"`
		ChunkBytes  int64 `json:"chunk_bytes"`
		IndexBytes  int64 `json:"index_bytes"`
	} `json:"store"`
	Panics  int64 `json:"panics"`
	Runtime struct {
		HeapObjects int64   `json:"heap_objects_bytes"`
		GCCycles    int64   `json:"gc_cycles"`
		GCPauseP99  float64 `json:"gc_pause_p99_seconds"`
		GCPauseMax  float64 `json:"gc_pause_max_seconds"`
	} `json:"runtime"`
}

type result struct {
	Date    string   `json:"date"`
	Go      string   `json:"go"`
	CPU     string   `json:"cpu"`
	Cores   int      `json:"cores"`
	Kernel  string   `json:"kernel"`
	Commit  string   `json:"commit"`
	Command string   `json:"command"`
	Note    string   `json:"note,omitempty"`
	Config  config   `json:"config"`
	Hiccups *hiccups `json:"hiccups,omitempty"`
	Phases  []*phase `json:"phases"`
	Minutes float64  `json:"run_minutes"`
}

func main() {
	var c config
	var rates, mdPath, jsonPath, note, from string
	flag.IntVar(&c.Entries, "entries", 10_000_000, "entries preloaded (100 per POST), the keys of every run")
	flag.IntVar(&c.ValueSize, "value-size", 450, "bytes of each JSON entry")
	flag.DurationVar(&c.Duration, "duration", 5*time.Minute, "length of the articles' run (10k req/s)")
	flag.DurationVar(&c.SweepFor, "sweep-duration", time.Minute, "length of each run of the rate sweep")
	flag.StringVar(&rates, "rates", "15000,20000,25000,30000", "request rates of the sweep, comma-separated")
	flag.IntVar(&c.Concurrency, "concurrency", 128, "load generator workers (connections)")
	flag.BoolVar(&c.Pin, "pin", false, "run the server on CPU 0 and the load generator on CPU 1 (taskset)")
	flag.StringVar(&c.MaxBytes, "max-bytes", "8GiB", "the server's --max-bytes")
	flag.StringVar(&c.GOGC, "gogc", "", "GOGC for both processes (empty: the default)")
	flag.StringVar(&mdPath, "md", "", "write the markdown report here")
	flag.StringVar(&jsonPath, "json", "", "write every raw figure here as JSON")
	flag.StringVar(&note, "note", "", "a note for the report's header")
	flag.StringVar(&from, "from-json", "", "render -md from an earlier -json file instead of running")
	flag.BoolVar(&c.Floor, "floor", true, "first run the articles' rate and the sweep against a server that does nothing (the machine's floor)")
	floorAddr := flag.String("floor-serve", "", "internal: serve as the floor server on this address")
	flag.Parse()
	if *floorAddr != "" {
		floorMain(*floorAddr, c.ValueSize)
	}
	if err := checkOutputs(from, jsonPath, mdPath); err != nil {
		fatalf("%v", err)
	}
	var res *result
	var err error
	if from != "" {
		res, err = readResult(from)
	} else {
		if err := c.check(); err != nil {
			fatalf("%v", err)
		}
		for _, r := range strings.Split(rates, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(r))
			if err != nil || n <= 0 {
				fatalf("bad -rates entry %q", r)
			}
			c.Rates = append(c.Rates, n)
		}
		res, err = run(c, note)
	}
	if err != nil {
		fatalf("%v", err)
	}
	if jsonPath != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := atomicfile.WriteFile(jsonPath, append(b, '\n')); err != nil {
			fatalf("-json: %v", err)
		}
	}
	md := render(res)
	if mdPath == "" {
		fmt.Print(md)
		return
	}
	if err := atomicfile.WriteFile(mdPath, []byte(md)); err != nil {
		fatalf("-md: %v", err)
	}
}

// checkOutputs refuses, before a run of many minutes, output files that
// could not be written at its end (a missing directory, a directory), a
// -json beside -from-json (which writes no JSON), and outputs that would
// overwrite the -from-json input.
func checkOutputs(from, jsonPath, mdPath string) error {
	if from != "" && jsonPath != "" {
		return errors.New("-json with -from-json: the report is drawn from the JSON file, none is written")
	}
	if from != "" && mdPath != "" {
		a, errA := os.Stat(from)
		b, errB := os.Stat(mdPath)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return fmt.Errorf("-md %s is the -from-json file", mdPath)
		}
	}
	for _, o := range []struct{ flag, path string }{{"-json", jsonPath}, {"-md", mdPath}} {
		if o.path == "" {
			continue
		}
		if err := atomicfile.CheckWritable(o.path); err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
	}
	return nil
}

// check refuses the values of the flags that the load generator would
// refuse only once the benchmark is under way (after the build and the
// floor phases), or would take for its default: a zero duration runs for
// 10 s.
func (c config) check() error {
	switch {
	case c.Entries <= 0:
		return fmt.Errorf("-entries %d: must be positive", c.Entries)
	case c.ValueSize <= 0:
		return fmt.Errorf("-value-size %d: must be positive", c.ValueSize)
	case c.Concurrency <= 0:
		return fmt.Errorf("-concurrency %d: must be positive", c.Concurrency)
	case c.Duration <= 0:
		return fmt.Errorf("-duration %v: must be positive", c.Duration)
	case c.SweepFor <= 0:
		return fmt.Errorf("-sweep-duration %v: must be positive", c.SweepFor)
	}
	if _, err := service.ParseSize(c.MaxBytes); err != nil {
		return fmt.Errorf("-max-bytes %q: %w", c.MaxBytes, err)
	}
	if c.GOGC != "" && c.GOGC != "off" {
		// The runtime ignores any other GOGC (and runs with 100), while
		// the report would name it.
		if _, err := strconv.Atoi(c.GOGC); err != nil {
			return fmt.Errorf("-gogc %q: want an integer or off", c.GOGC)
		}
	}
	// The load generator's own check of the preload (the largest request
	// bodies) and of a run (every run shares -entries, -value-size and
	// -concurrency), now rather than after the floor phases.
	batch := min(c.Entries, 100)
	for _, o := range []load.Options{
		{URL: "http://127.0.0.1/", Cardinality: c.Entries, ValueSize: c.ValueSize, Concurrency: 4,
			WriteRatio: 1, Batch: batch, Sequential: true, Requests: int64((c.Entries + batch - 1) / batch)},
		{URL: "http://127.0.0.1/", Cardinality: c.Entries, ValueSize: c.ValueSize, Concurrency: c.Concurrency,
			Rate: 10000, WriteRatio: 0.5, Duration: c.Duration},
	} {
		if err := o.Check(); err != nil {
			return fmt.Errorf("-entries %d, -value-size %d, -concurrency %d: %w", c.Entries, c.ValueSize, c.Concurrency, err)
		}
	}
	return nil
}

// preloadArgs returns the load generator's arguments that write each of
// the entries keys once, in POSTs of 100 (fewer when there are fewer
// keys): the last POST wraps round to the first keys when entries is not
// a multiple of 100.
func preloadArgs(entries int) []string {
	batch := min(entries, 100)
	posts := (entries + batch - 1) / batch
	return []string{"--write-ratio", "1", "--batch", strconv.Itoa(batch), "--sequential", "--requests", strconv.Itoa(posts)}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "svcbench: "+format+"\n", args...)
	os.Exit(1)
}

func readResult(path string) (*result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-from-json: %w", err)
	}
	var res result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("-from-json %s: %w", path, err)
	}
	for i, p := range res.Phases {
		if p == nil {
			return nil, fmt.Errorf("-from-json %s: phase %d is null", path, i+1)
		}
		if err := p.decode(); err != nil {
			return nil, fmt.Errorf("-from-json %s: %w", path, err)
		}
	}
	return &res, nil
}

func (p *phase) decode() error {
	if err := json.Unmarshal(p.Report, &p.report); err != nil {
		return fmt.Errorf("%s: report: %w", p.Name, err)
	}
	if err := json.Unmarshal(p.Stats, &p.stats); err != nil {
		return fmt.Errorf("%s: stats: %w", p.Name, err)
	}
	// Requests served by the server: the counted ones that were sent (not
	// those of a paced run that were due but never sent, which Requests
	// also counts), the warm-up's and the read-your-writes reads, the
	// warm-up's included (a report written before it counted them has
	// none).
	n := float64(p.report.Requests - p.report.NotSent + p.report.WarmupRequests)
	if p.report.RYW != nil {
		n += float64(p.report.RYW.Checks + p.report.RYW.WarmupChecks)
	}
	if n > 0 {
		p.serverUsPerR = p.ServerCPU / n * 1e6
		p.clientUsPerR = p.ClientCPU / n * 1e6
	}
	return nil
}

func run(c config, note string) (*result, error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "svcbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "cachekit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("building cachekit: %w", err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	url := "http://" + addr
	res := &result{
		Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		CPU: cpuModel(), Cores: runtime.NumCPU(), Kernel: kernel(), Commit: commit(), Note: note, Config: c,
		Command: "cd cmd/cachekit && go run ./internal/svcbench " + strings.Join(os.Args[1:], " "),
	}
	if c.Floor {
		fmt.Fprintf(os.Stderr, "svcbench: hiccups (%s)\n", time.Now().UTC().Format("15:04:05"))
		h := measureHiccups(20 * time.Second)
		res.Hiccups = &h
		if err := runFloor(c, res, bin, dir); err != nil {
			return nil, err
		}
	}
	server := command(c, 0, bin, "serve", "--addr", addr, "--max-bytes", c.MaxBytes, "--default-ttl", "10m", "--log-level", "warn")
	var serverLog bytes.Buffer
	server.Stderr = &serverLog
	if err := server.Start(); err != nil {
		return nil, err
	}
	defer func() {
		server.Process.Signal(os.Interrupt)
		server.Wait()
	}()
	if err := waitHealthy(url, 10*time.Second); err != nil {
		return nil, fmt.Errorf("%w; server log:\n%s", err, serverLog.String())
	}
	pid := server.Process.Pid
	common := []string{"--url", url, "--value-size", strconv.Itoa(c.ValueSize), "--cardinality", strconv.Itoa(c.Entries),
		"--concurrency", strconv.Itoa(c.Concurrency)}
	type spec struct {
		name string
		args []string
	}
	specs := []spec{
		// Preload with a TTL that outlives every run; the runs write with the articles' 10 minutes.
		{"preload", append(preloadArgs(c.Entries), "--ttl", "30m", "--concurrency", "4", "--seed", "1")},
		{"articles", []string{"--rate", "10000", "--write-ratio", "0.5", "--ttl", "10m", "--duration", c.Duration.String(),
			"--warmup", warmup(c.Duration, 10*time.Second), "--seed", "2"}},
		{"ryw", []string{"--rate", "5000", "--write-ratio", "1", "--ryw", "--ttl", "10m", "--duration", c.SweepFor.String(),
			"--warmup", warmup(c.SweepFor, 5*time.Second), "--seed", "3"}},
	}
	for _, r := range c.Rates {
		specs = append(specs, spec{fmt.Sprintf("sweep-%d", r), []string{"--rate", strconv.Itoa(r), "--write-ratio", "0.5",
			"--ttl", "10m", "--duration", c.SweepFor.String(), "--warmup", warmup(c.SweepFor, 5*time.Second), "--seed", "4"}})
	}
	for _, s := range specs {
		// s.args come last: a flag given twice takes its last value.
		args := append(append([]string{}, common...), s.args...)
		fmt.Fprintf(os.Stderr, "svcbench: %s (%s)\n", s.name, time.Now().UTC().Format("15:04:05"))
		p, err := runPhase(c, bin, url+"/v1/stats", pid, s.name, args, dir)
		if err != nil {
			return nil, err
		}
		res.Phases = append(res.Phases, p)
	}
	res.Minutes = time.Since(start).Minutes()
	return res, nil
}

// runFloor runs the floor phases: the articles' rate and the sweep's rates,
// each for the sweep's duration, against floorServe in a process of its
// own (this command, run again with -floor-serve).
func runFloor(c config, res *result, bin, dir string) error {
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	floor := command(c, 0, os.Args[0], "-floor-serve", addr, "-value-size", strconv.Itoa(c.ValueSize))
	floor.Stderr = os.Stderr
	if err := floor.Start(); err != nil {
		return err
	}
	defer func() {
		floor.Process.Kill()
		floor.Wait()
	}()
	// The floor server answers any GET with 200, /healthz included.
	if err := waitHealthy("http://"+addr, 10*time.Second); err != nil {
		return fmt.Errorf("floor server: %w", err)
	}
	common := []string{"--url", "http://" + addr, "--value-size", strconv.Itoa(c.ValueSize), "--cardinality", strconv.Itoa(c.Entries),
		"--concurrency", strconv.Itoa(c.Concurrency)}
	for _, r := range append([]int{10000}, c.Rates...) {
		name := fmt.Sprintf("floor-%d", r)
		args := append(append([]string{}, common...), "--rate", strconv.Itoa(r), "--write-ratio", "0.5",
			"--ttl", "10m", "--duration", c.SweepFor.String(), "--warmup", warmup(c.SweepFor, 5*time.Second), "--seed", "5")
		fmt.Fprintf(os.Stderr, "svcbench: %s (%s)\n", name, time.Now().UTC().Format("15:04:05"))
		p, err := runPhase(c, bin, "", floor.Process.Pid, name, args, dir)
		if err != nil {
			return err
		}
		res.Phases = append(res.Phases, p)
	}
	return nil
}

// runPhase runs one load phase against the server of process pid; statsURL,
// if not empty, is read after it (the service's /v1/stats).
func runPhase(c config, bin, statsURL string, pid int, name string, args []string, dir string) (*phase, error) {
	out := filepath.Join(dir, name+".json")
	p := &phase{Name: name, Args: args, LoadBefore: loadavg()}
	cpu0, err := procCPU(pid)
	if err != nil {
		return nil, err
	}
	cmd := command(c, 1, bin, append([]string{"load", "--json", out}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: cachekit load: %w\n%s", name, err, stderr.String())
	}
	cpu1, err := procCPU(pid)
	if err != nil {
		return nil, err
	}
	p.ServerCPU = cpu1 - cpu0
	p.ClientCPU = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	p.LoadAfter = loadavg()
	if p.Report, err = os.ReadFile(out); err != nil {
		return nil, err
	}
	p.Stats = json.RawMessage("{}")
	if statsURL != "" {
		if p.Stats, err = get(statsURL); err != nil {
			return nil, err
		}
	}
	p.ServerRSS, p.ServerHWM = procRSS(pid)
	if err := p.decode(); err != nil {
		return nil, err
	}
	if p.report.Requests == 0 {
		return nil, fmt.Errorf("%s: the load generator completed no request", name)
	}
	return p, nil
}

// warmup returns the warm-up of a run of d: w, or a sixth of short runs.
func warmup(d, w time.Duration) string {
	return min(w, d/6).String()
}

// command returns bin args..., on CPU cpu when c.Pin, with c.GOGC.
func command(c config, cpu int, bin string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	if c.Pin {
		cmd = exec.Command("taskset", append([]string{"-c", strconv.Itoa(cpu), bin}, args...)...)
	} else {
		cmd = exec.Command(bin, args...)
	}
	cmd.Env = os.Environ()
	if c.GOGC != "" {
		cmd.Env = append(cmd.Env, "GOGC="+c.GOGC)
	}
	return cmd
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitHealthy(url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		if _, err := get(url + "/healthz"); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("the server did not become healthy")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, err
}

// procCPU returns the user and system CPU seconds of process pid.
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}

func procRSS(pid int) (rss, hwm int64) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], ", ")
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return strings.TrimSpace(string(b))
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--", "../../service", "../../bytecache", ".").Output(); err == nil && len(st) > 0 {
		s += " (with uncommitted changes)"
	}
	return s
}
