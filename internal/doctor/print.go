package doctor

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/learn-idempotency/learn/pgtemp"
)

// Way prints what the doctor found about one way (a probe's result): where
// its URL came from, what was found, whether it is available and works, and
// the server it started; one "   label: text" item a line.
func (p *Printer) Way(w pgtemp.Way, src Sources) {
	if w.Mode == pgtemp.URL && src.URL != "" {
		p.Item("from", src.URL)
	}
	for _, d := range w.Details {
		p.Item("found", d)
	}
	switch {
	case !w.Available:
		p.Item("available", "no: "+errText(w.Err))
	case w.Works:
		how := fmt.Sprintf("yes: started in %s", w.ReadyIn.Round(time.Millisecond))
		if w.Mode == pgtemp.Local || w.Mode == pgtemp.Download {
			how += " (" + templateState(w) + ")"
		}
		done := map[pgtemp.Mode]string{
			pgtemp.URL:      "made a schema, ran SELECT 1 in it, dropped it",
			pgtemp.Local:    "made a schema, ran SELECT 1 in it, stopped the cluster and removed its directory",
			pgtemp.Docker:   "made a schema, ran SELECT 1 in it, removed the container and its volume",
			pgtemp.Download: "made a schema, ran SELECT 1 in it, stopped the cluster and removed its directory (the download stays in the cache)",
		}[w.Mode]
		p.Item("works", how+"; "+done)
		p.Item("server", w.Describe)
		templateCost(p, w)
	default:
		p.Item("works", "no: "+errText(w.Err))
	}
}

// templateState says how a local start went with the cluster template:
// copied it, ran initdb and saved it, or ran initdb and could not save it
// (templateCost then says why and what it costs).
func templateState(w pgtemp.Way) string {
	switch {
	case !w.Cold:
		return "warm: copied the template"
	case w.TemplateErr == nil:
		return "cold: ran initdb and saved the template; later starts copy it"
	}
	return "cold: ran initdb; the template was not saved, see below"
}

// templateCost is the line, after the way's, that says why a cold start
// could not save the cluster template and what that costs: initdb on every
// start, as long as it took here.
func templateCost(p *Printer, w pgtemp.Way) {
	if w.Mode != pgtemp.Local && w.Mode != pgtemp.Download || !w.Cold || w.TemplateErr == nil {
		return
	}
	p.Item("template", fmt.Sprintf("not saved: %v; so every start runs initdb, about %s here; fix that, or set XDG_CACHE_HOME to a directory learn may write",
		w.TemplateErr, roundSeconds(w.InitdbTook)))
}

// roundSeconds shows a duration as people read it: "0.6 s", "2.1 s", "14 s".
func roundSeconds(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.0f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// Printer writes the doctor's plain-text report to W, without colour.
// Write errors are ignored: the report goes to a terminal or a pipe.
type Printer struct{ W io.Writer }

// Line writes s and a newline.
func (p *Printer) Line(s string) { fmt.Fprintln(p.W, s) }

// Item writes "   label: text", with the text's later lines indented under it.
func (p *Printer) Item(label, text string) {
	pad := strings.Repeat(" ", 3+len(label)+2)
	text = strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n"+pad)
	fmt.Fprintf(p.W, "   %s: %s\n", label, text)
}
