package styles

import (
	"embed"
	"io/fs"
	"sort"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// This file differs from chroma v2.14.0's: an embedded style is parsed
// when it is first asked for by name (Get), all of them only for Names,
// and none when the program starts. See ../README.md.

//go:embed *.xml
var embedded embed.FS

// Registry of Styles. An embedded style joins it when Get first asks for
// it, all of them on Names; reading the map directly sees only those so
// far (glamour registers its own and reads it back through Get).
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

// Get named style, or Fallback. A style not registered yet is looked for
// in the embedded file of its name, then among all of them.
func Get(name string) *chroma.Style {
	if style, ok := Registry[name]; ok {
		return style
	}
	if _, err := fs.Stat(embedded, name+".xml"); err == nil {
		if style := parse(name + ".xml"); style.Name == name {
			if _, ok := Registry[name]; !ok {
				Registry[name] = style
			}
			return Registry[name]
		}
	}
	load()
	if style, ok := Registry[name]; ok {
		return style
	}
	return Fallback
}
