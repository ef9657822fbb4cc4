package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// This file differs from chroma v2.14.0's: the embedded styles are parsed
// on first use (Get, Names, Register), not when the program starts. See
// ../README.md.

//go:embed *.xml
var embedded embed.FS

// Registry of Styles. The embedded styles are added on first use of Get,
// Names or Register; reading the map directly sees only those registered
// so far (glamour registers its own and reads it back through Get).
var Registry = map[string]*chroma.Style{}

var loadOnce sync.Once

// load adds every embedded style that has not been registered under its
// name already.
func load() {
	loadOnce.Do(func() {
		files, err := fs.ReadDir(embedded, ".")
		if err != nil {
			panic(err)
		}
		for _, file := range files {
			if file.IsDir() {
				continue
			}
			style := parse(file.Name())
			if _, ok := Registry[style.Name]; !ok {
				Registry[style.Name] = style
			}
		}
	})
}

func parse(name string) *chroma.Style {
	r, err := embedded.Open(name)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	style, err := chroma.NewXMLStyle(r)
	if err != nil {
		panic(err)
	}
	return style
}

// Fallback style. Reassign to change the default fallback style.
var Fallback = parse("swapoff.xml")

// Register a chroma.Style.
func Register(style *chroma.Style) *chroma.Style {
	load()
	Registry[style.Name] = style
	return style
}

// Names of all available styles.
func Names() []string {
	load()
	out := []string{}
	for name := range Registry {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Get named style, or Fallback.
func Get(name string) *chroma.Style {
	load()
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
