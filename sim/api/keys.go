package api

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/learn-idempotency/learn/internal/resp"
	"github.com/learn-idempotency/learn/sim/trace"
)

// KeyStore is where an API instance remembers idempotency keys when they are
// not kept in the booking row. Both implementations are the broken designs
// the lesson warns about: process memory (another API instance does not
// know the key) and Redis with a TTL (no transaction with PostgreSQL, and
// the key expires).
type KeyStore interface {
	// Lane is where the store lives: LaneRedis, or "" for the instance's
	// own memory.
	Lane() string
	// Describe names the store in captions: "api-1's memory", "Redis (TTL 24h0m0s)".
	Describe() string
	// Get returns the booking id remembered for (user, key).
	Get(ctx context.Context, user string, key uuid.UUID) (id int64, found bool, err error)
	// Put remembers the booking id for (user, key).
	Put(ctx context.Context, user string, key uuid.UUID, id int64) error
}

// MemoryKeys keeps keys in one API instance's memory: a map lost on restart
// and invisible to every other instance.
type MemoryKeys struct {
	Instance string
	mu       sync.Mutex
	ids      map[string]int64
}

// Lane is "": the memory belongs to the instance.
func (m *MemoryKeys) Lane() string { return "" }

// Describe says whose memory it is.
func (m *MemoryKeys) Describe() string { return m.Instance + "'s memory" }

// Get looks the key up in the map.
func (m *MemoryKeys) Get(_ context.Context, user string, key uuid.UUID) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ids[user+"/"+key.String()]
	return id, ok, nil
}

// Put stores the key in the map.
func (m *MemoryKeys) Put(_ context.Context, user string, key uuid.UUID, id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ids == nil {
		m.ids = map[string]int64{}
	}
	m.ids[user+"/"+key.String()] = id
	return nil
}

// RedisKeys keeps keys in Redis with a TTL (SET … PX), shared by every
// instance, but in no transaction with PostgreSQL. It speaks the Redis
// protocol over TCP to the stage's Redis server.
type RedisKeys struct {
	Client *resp.Client
	TTL    time.Duration
}

// Lane is LaneRedis.
func (r *RedisKeys) Lane() string { return trace.LaneRedis }

// Describe names Redis and the TTL.
func (r *RedisKeys) Describe() string { return fmt.Sprintf("Redis (TTL %s)", r.TTL) }

func redisKey(user string, key uuid.UUID) string { return "idempotency:" + user + ":" + key.String() }

// Get reads the key; a missing or expired key is not found.
func (r *RedisKeys) Get(ctx context.Context, user string, key uuid.UUID) (int64, bool, error) {
	reply, err := r.Client.Do(ctx, "GET", redisKey(user, key))
	if errors.Is(err, resp.ErrNil) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("redis GET: %w", err)
	}
	v, ok := reply.(string)
	if !ok {
		return 0, false, fmt.Errorf("redis GET: a %T reply, want a string", reply)
	}
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil, err
}

// Put writes the key with the TTL.
func (r *RedisKeys) Put(ctx context.Context, user string, key uuid.UUID, id int64) error {
	_, err := r.Client.Do(ctx, "SET", redisKey(user, key), strconv.FormatInt(id, 10),
		"PX", strconv.FormatInt(max(r.TTL.Milliseconds(), 1), 10))
	if err != nil {
		return fmt.Errorf("redis SET: %w", err)
	}
	return nil
}
