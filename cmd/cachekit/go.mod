module github.com/cachekit/cachekit/cmd/cachekit

go 1.25

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/cachekit/cachekit v0.0.0
	github.com/cachekit/cachekit/redis v0.0.0
	github.com/redis/go-redis/v9 v9.22.0
	gonum.org/v1/plot v0.17.0
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
	golang.org/x/text v0.28.0 // indirect
)

replace (
	github.com/cachekit/cachekit => ../..
	github.com/cachekit/cachekit/redis => ../../redis
)
