package unit

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/hubd/hubd/gen/db"
)

// Content is stored once per hash and never changes, so a replica may keep what it read: reading a
// Unit's data then costs the read of its head (the hash) and no more, and any replica's copy is right.
// The cache holds small contents only, so it stays within about contentCacheEntries x
// contentCacheMaxSize bytes (64 MB) whatever is read.
const (
	contentCacheEntries = 2048
	contentCacheMaxSize = 32 << 10
)

type contentCache struct {
	recent *lru.Cache[string, []byte]
}

func newContentCache() *contentCache {
	recent, err := lru.New[string, []byte](contentCacheEntries)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &contentCache{recent: recent}
}

// get returns the content stored under hash, reading through q when it is not cached: a write's
// transaction passes its own, since content it (or a Link it propagated) just stored is not visible
// elsewhere until it commits. Callers must not modify it.
func (c *contentCache) get(ctx context.Context, q *db.Queries, hash string) ([]byte, error) {
	if data, ok := c.recent.Get(hash); ok {
		return data, nil
	}
	data, err := q.ConfigDataGet(ctx, hash)
	if err != nil {
		return nil, err
	}
	c.put(hash, data)
	return data, nil
}

// put remembers content a write stores. A write that then rolls back leaves it here, which is harmless:
// the content is what its hash names whether or not it was kept.
func (c *contentCache) put(hash string, data []byte) {
	if len(data) <= contentCacheMaxSize {
		c.recent.Add(hash, data)
	}
}
