module github.com/cachekit/cachekit/bench

go 1.25

replace github.com/cachekit/cachekit => ../

require (
	github.com/VictoriaMetrics/fastcache v1.13.0
	github.com/allegro/bigcache/v3 v3.1.0
	github.com/cachekit/cachekit v0.0.0-00010101000000-000000000000
	github.com/coocood/freecache v1.2.7
)

require github.com/golang/snappy v1.0.0 // indirect

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/Yiling-J/theine-go v0.6.3
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgraph-io/ristretto/v2 v2.4.2
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/hashicorp/golang-lru/arc/v2 v2.0.7
	github.com/hashicorp/golang-lru/v2 v2.0.7
	github.com/klauspost/cpuid/v2 v2.0.9 // indirect
	github.com/maypok86/otter/v2 v2.4.0
	github.com/patrickmn/go-cache v2.1.0+incompatible
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/viccon/sturdyc v1.1.5
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/sync v0.16.0
	golang.org/x/sys v0.36.0 // indirect
	golang.org/x/text v0.28.0 // indirect
	gonum.org/v1/plot v0.17.0
)
