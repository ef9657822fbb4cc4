package common

import "sync"

// DocKey identifies one rendering of a page: its slug, the wrap width in
// cells and the Glamour style.
type DocKey struct {
	Slug  string
	Width int
	Style string
}

// Docs caches rendered pages, so a page is rendered once per (page, width,
// style). Safe for concurrent use: the sessions of a workshop share one.
type Docs struct {
	mu  sync.Mutex
	out map[DocKey]string
}

// Get returns the rendering of k, if cached.
func (d *Docs) Get(k DocKey) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s, ok := d.out[k]
	return s, ok
}

// Put caches the rendering of k.
func (d *Docs) Put(k DocKey, s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.out == nil {
		d.out = map[DocKey]string{}
	}
	d.out[k] = s
}
