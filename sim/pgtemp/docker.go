package pgtemp

import "errors"

// errDockerNotYet is the whole Docker way for now: a later version starts
// PostgreSQL through testcontainers-go's postgres module here.
var errDockerNotYet = errors.New("not available yet: this version of learn cannot start PostgreSQL in Docker")
