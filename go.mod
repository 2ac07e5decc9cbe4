module github.com/cachekit/cachekit

go 1.25
