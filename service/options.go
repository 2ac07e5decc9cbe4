package service

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Options configures a Server. The zero value of each field selects the
// default stated beside it. RegisterFlags binds the fields to command-line
// flags and ApplyEnv to CACHEKIT_* environment variables.
type Options struct {
	// Addr is the address ListenAndServe listens on. Default
	// "127.0.0.1:8080" (local only; use ":8080" to listen on every
	// interface).
	Addr string
	// MaxBytes is the budget of the in-memory store's entry storage
	// (bytecache.Options.MaxBytes). The store's index and the server's own
	// memory come on top; see the package documentation. Default 256 MiB;
	// at most MaxStoreBytes (64 TiB: 65536 shards of 1 GiB).
	MaxBytes int64
	// Shards is the number of store shards (bytecache.Options.Shards).
	// Default 0: the store's default.
	Shards int
	// DefaultTTL is the time to live of entries written without one; it
	// must be at most MaxTTL. Default 10 minutes, or MaxTTL if shorter.
	// Negative: entries written without a TTL never expire.
	DefaultTTL time.Duration
	// MaxTTL bounds the TTL a request may ask for; longer is a 400.
	// Default and maximum 100 years (DefaultMaxTTL): New refuses more.
	MaxTTL time.Duration
	// MaxKeyBytes is the longest key accepted (longer is a 400), at most
	// 65535. Default 1024.
	MaxKeyBytes int
	// MaxValueBytes is the largest value accepted: a PUT body, or one
	// entry of a POST (larger is a 413). With its key it must fit in a
	// store shard (MaxBytes/Shards, less a few bytes): with Shards 0, New
	// takes fewer shards than the store's default if a shard would be too
	// small. Default 1 MiB, halved until it fits if MaxBytes is too small
	// for it (Server.Options reports the limit in effect).
	MaxValueBytes int
	// MaxBodyBytes is the largest POST /v1/entries body (larger is a
	// 413). Default 8 MiB.
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the request line and headers. It must hold a
	// request line with a key of MaxKeyBytes percent-encoded (3 ×
	// MaxKeyBytes + 4 KiB), so that every key a POST may store can be read
	// and deleted. Default 64 KiB, or that minimum if larger.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// the whole request, WriteTimeout the response (from when the handler
	// starts writing it, after the body and the tier; net/http's own
	// deadline, from the end of the headers, is moved then) and
	// IdleTimeout the wait for the next request on a kept-alive
	// connection. Defaults 5s, 30s, 30s and 2m.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// ShutdownTimeout bounds the graceful shutdown: requests still running
	// after it are cut off. Default 30s.
	ShutdownTimeout time.Duration
	// Tier is an optional second tier (for example Redis) behind the
	// in-memory store; see Tier. Default nil: none (a nil pointer in the
	// interface is refused).
	Tier Tier
	// TierTimeout bounds each call to Tier. Default 100ms.
	TierTimeout time.Duration
	// Logger receives the server's structured logs. Default: slog.Default().
	Logger *slog.Logger
	// Now is the store's clock (tests). Default time.Now.
	Now func() time.Time
}

// Defaults.
const (
	DefaultAddr          = "127.0.0.1:8080"
	DefaultMaxBytes      = 256 << 20
	DefaultTTL           = 10 * time.Minute
	DefaultMaxTTL        = 100 * 365 * 24 * time.Hour
	DefaultMaxKeyBytes   = 1024
	DefaultMaxValueBytes = 1 << 20
	DefaultMaxBodyBytes  = 8 << 20
)

// MaxStoreBytes is the largest MaxBytes: 65536 store shards of 1 GiB.
const MaxStoreBytes = 1 << 46

// ErrInvalidOptions is wrapped by the errors New returns for options it
// cannot honour.
var ErrInvalidOptions = errors.New("service: invalid options")

func (o Options) withDefaults() (Options, error) {
	bad := func(format string, args ...any) (Options, error) {
		return o, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxBytes < 0 {
		return bad("max-bytes must be positive")
	}
	if o.MaxBytes > MaxStoreBytes {
		return bad("max-bytes %d is too large: the store holds at most %d (64 TiB)", o.MaxBytes, int64(MaxStoreBytes))
	}
	if o.Shards < 0 || o.Shards > 1<<16 || o.Shards&(o.Shards-1) != 0 {
		return bad("shards must be 0 or a power of two up to 65536, not %d", o.Shards)
	}
	if o.MaxTTL == 0 {
		o.MaxTTL = DefaultMaxTTL
	}
	if o.MaxTTL < 0 || o.MaxTTL > DefaultMaxTTL {
		return bad("max-ttl must be positive and at most %v", DefaultMaxTTL)
	}
	if o.DefaultTTL == 0 {
		o.DefaultTTL = min(DefaultTTL, o.MaxTTL)
	}
	if o.DefaultTTL > o.MaxTTL {
		return bad("default-ttl %v exceeds max-ttl %v", o.DefaultTTL, o.MaxTTL)
	}
	if o.MaxKeyBytes == 0 {
		o.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if o.MaxKeyBytes < 0 || o.MaxKeyBytes > math.MaxUint16 {
		return bad("max-key-bytes must be between 1 and 65535")
	}
	if o.MaxValueBytes == 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.MaxValueBytes < 0 || o.MaxValueBytes > math.MaxInt32-maxValueHeader {
		return bad("max-value-bytes must be positive and below 2 GiB")
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if v := reflect.ValueOf(o.Tier); o.Tier != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		// A nil *redis.ByteTier, say: every tier call would panic (each
		// recovered as a 500).
		return bad("tier: a nil %T", o.Tier)
	}
	if o.MaxBodyBytes < 0 {
		return bad("max-body-bytes must be positive")
	}
	// A key of MaxKeyBytes, percent-encoded, must fit in the request line.
	minHeader := 3*o.MaxKeyBytes + 4<<10
	if o.MaxHeaderBytes == 0 {
		o.MaxHeaderBytes = max(64<<10, minHeader)
	}
	if o.MaxHeaderBytes > 0 && o.MaxHeaderBytes < minHeader {
		return bad("max-header-bytes %d cannot hold a request line with a key of max-key-bytes %d (percent-encoded): at least %d", o.MaxHeaderBytes, o.MaxKeyBytes, minHeader)
	}
	def := func(d *time.Duration, v time.Duration, name string) error {
		if *d == 0 {
			*d = v
		}
		if *d < 0 {
			return fmt.Errorf("%w: %s must be positive", ErrInvalidOptions, name)
		}
		return nil
	}
	if err := errors.Join(
		def(&o.ReadHeaderTimeout, 5*time.Second, "read-header-timeout"),
		def(&o.ReadTimeout, 30*time.Second, "read-timeout"),
		def(&o.WriteTimeout, 30*time.Second, "write-timeout"),
		def(&o.IdleTimeout, 2*time.Minute, "idle-timeout"),
		def(&o.ShutdownTimeout, 30*time.Second, "shutdown-timeout"),
		def(&o.TierTimeout, 100*time.Millisecond, "tier-timeout"),
	); err != nil {
		return o, err
	}
	if o.MaxHeaderBytes < 0 {
		return bad("max-header-bytes must be positive")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// RegisterFlags defines a flag on fs for each setting of o (--addr,
// --max-bytes, --default-ttl, ...), with o's current values as defaults,
// so that parsing fs sets o's fields. Sizes accept units (64MiB, 1GB,
// 512KiB, or plain bytes); durations use Go's syntax (10m, 1h30m).
func (o *Options) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Addr, "addr", orDefault(o.Addr, DefaultAddr), "address to listen on (host:port)")
	fs.Var(sizeFlag{&o.MaxBytes}, "max-bytes", "budget of the in-memory store's entry storage (units: KiB, MiB, GiB, KB, MB, GB)")
	fs.IntVar(&o.Shards, "shards", o.Shards, "store shards, a power of two (0: the store's default)")
	fs.DurationVar(&o.DefaultTTL, "default-ttl", o.DefaultTTL, "TTL of entries written without one (negative: no expiry); 0: 10m, or max-ttl if shorter")
	fs.DurationVar(&o.MaxTTL, "max-ttl", o.MaxTTL, "longest TTL a request may ask for (at most 100 years)")
	fs.Var(intSizeFlag{&o.MaxKeyBytes}, "max-key-bytes", "longest key accepted (at most 65535)")
	fs.Var(intSizeFlag{&o.MaxValueBytes}, "max-value-bytes", "largest value accepted (a PUT body or one POSTed entry); 0: 1 MiB, halved until it fits max-bytes")
	fs.Var(sizeFlag{&o.MaxBodyBytes}, "max-body-bytes", "largest POST /v1/entries body")
	fs.Var(intSizeFlag{&o.MaxHeaderBytes}, "max-header-bytes", "largest request line and headers; 0: 64 KiB, or 3 × max-key-bytes + 4 KiB if that is larger")
	fs.DurationVar(&o.ReadHeaderTimeout, "read-header-timeout", o.ReadHeaderTimeout, "time allowed to read a request's headers")
	fs.DurationVar(&o.ReadTimeout, "read-timeout", o.ReadTimeout, "time allowed to read a whole request")
	fs.DurationVar(&o.WriteTimeout, "write-timeout", o.WriteTimeout, "time allowed to write a response")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", o.IdleTimeout, "how long an idle kept-alive connection is kept")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", o.ShutdownTimeout, "time allowed for requests in flight at shutdown")
	fs.DurationVar(&o.TierTimeout, "tier-timeout", o.TierTimeout, "deadline of each call to the second tier")
}

// DefaultOptions returns Options with every default filled in, for
// RegisterFlags to show them, except DefaultTTL, MaxValueBytes and
// MaxHeaderBytes: their defaults depend on other limits (MaxTTL, MaxBytes,
// MaxKeyBytes), so they stay 0 and New fits them to the limits given.
// Filled in, they would be the values of the default limits, and a flag
// lowering MaxTTL or MaxBytes or raising MaxKeyBytes would make New refuse
// them. Logger stays nil too (New uses slog.Default()), so that a program
// that sets slog's default after calling DefaultOptions gets it.
func DefaultOptions() Options {
	o, _ := Options{}.withDefaults()
	o.Logger = nil
	o.DefaultTTL, o.MaxValueBytes, o.MaxHeaderBytes = 0, 0, 0
	return o
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// EnvName is the environment variable of flag name: CACHEKIT_ and the name
// in upper case with dashes as underscores (max-bytes: CACHEKIT_MAX_BYTES).
func EnvName(flagName string) string {
	return "CACHEKIT_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// ApplyEnv sets each flag of fs that was not given on the command line from
// its environment variable (EnvName), when lookup finds one: flags win over
// the environment, which wins over the defaults. Call it after fs.Parse.
func ApplyEnv(fs *flag.FlagSet, lookup func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] {
			return
		}
		v, ok := lookup(EnvName(f.Name))
		if !ok {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", EnvName(f.Name), v, err))
		}
	})
	return errors.Join(errs...)
}

// FlagAttrs returns the value of every flag of fs, as log attributes.
func FlagAttrs(fs *flag.FlagSet) []any {
	var attrs []any
	fs.VisitAll(func(f *flag.Flag) { attrs = append(attrs, slog.String(f.Name, f.Value.String())) })
	return attrs
}

// ParseSize parses a byte size: a non-negative integer with an optional
// unit, B, KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T too) or KB, MB,
// GB, TB (powers of 1000), case-insensitive.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes with an optional unit (64MiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: %w", s, err)
	}
	var mult int64
	switch strings.ToLower(strings.TrimSpace(t[i:])) {
	case "", "b":
		mult = 1
	case "k", "kib":
		mult = 1 << 10
	case "m", "mib":
		mult = 1 << 20
	case "g", "gib":
		mult = 1 << 30
	case "t", "tib":
		mult = 1 << 40
	case "kb":
		mult = 1e3
	case "mb":
		mult = 1e6
	case "gb":
		mult = 1e9
	case "tb":
		mult = 1e12
	default:
		return 0, fmt.Errorf("invalid size %q: unknown unit %q", s, t[i:])
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return n * mult, nil
}

// FormatSize formats n bytes with the largest binary unit that divides it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
}

type sizeFlag struct{ p *int64 }

func (f sizeFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return FormatSize(*f.p)
}

func (f sizeFlag) Set(s string) error {
	n, err := ParseSize(s)
	if err == nil {
		*f.p = n
	}
	return err
}

type intSizeFlag struct{ p *int }

func (f intSizeFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return FormatSize(int64(*f.p))
}

func (f intSizeFlag) Set(s string) error {
	n, err := ParseSize(s)
	if err == nil && n > math.MaxInt32 {
		err = fmt.Errorf("invalid size %q: at most %d", s, math.MaxInt32)
	}
	if err == nil {
		*f.p = int(n)
	}
	return err
}
