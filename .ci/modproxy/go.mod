module learn-ci/modproxy

go 1.26.8

require golang.org/x/mod v0.41.0
