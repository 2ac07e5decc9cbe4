module github.com/cachekit/cachekit

go 1.25

require github.com/anishathalye/porcupine v1.3.1
