package workshop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/bubbletea"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ttyin"
	"github.com/learn-idempotency/learn/internal/ui"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/markdown"
	"github.com/learn-idempotency/learn/lessons"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/sim"
)

// What an attendee may ask for after "ssh -p PORT HOST": nothing (the
// app), a first page (as the local commands open it), or their progress.
// Nothing else runs: there is no shell.
const commandsHelp = "learn workshop: run ssh with no command for the app; or: " + playUsage + ", race, lesson, interview, progress (your progress as JSON; progress export too)"

// playUsage is the forms of the play command: the local command's flag,
// and the word alone.
const playUsage = "play [SCENARIO] [--variant correct|broken] (or: play SCENARIO broken)"

// firstPage is the page the command cmd opens the app on, or an error
// that says what may be asked.
func firstPage(cmd []string) (common.Open, error) {
	if len(cmd) == 0 {
		return common.Open{Place: progress.Place{Page: progress.PageHome}}, nil
	}
	args := cmd[1:]
	switch cmd[0] {
	case "play":
		return playPage(args)
	case "race":
		if len(args) == 0 {
			return common.Open{Place: progress.Place{Page: progress.PageRace}}, nil
		}
	case "lesson", "interview":
		kind := lessons.Kind(cmd[0])
		for _, p := range lessons.All() {
			if p.Kind == kind && (len(args) == 0 || args[0] == p.Slug) && len(args) <= 1 {
				return common.Open{Place: progress.Place{Page: progress.PageReader, Name: p.Slug}}, nil
			}
		}
	}
	return common.Open{}, errors.New(commandsHelp)
}

// playPage is the play screen the arguments of play ask for, as the local
// command takes them: a scenario's name, then the design as
// "--variant broken", "--variant=broken" or the word alone ("broken").
func playPage(args []string) (common.Open, error) {
	o := common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}
	usage := func(format string, a ...any) (common.Open, error) {
		return common.Open{}, fmt.Errorf("learn workshop: %s; use %s", fmt.Sprintf(format, a...), playUsage)
	}
	named, variant := false, ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--variant" || a == "-variant":
			if i+1 == len(args) {
				return usage("--variant needs correct or broken after it")
			}
			i++
			variant = args[i]
		case strings.HasPrefix(a, "--variant=") || strings.HasPrefix(a, "-variant="):
			variant = a[strings.Index(a, "=")+1:]
		case strings.HasPrefix(a, "-"):
			return usage("unknown option %q", a)
		case !named:
			if _, err := sim.Lookup(a); err != nil {
				return usage("%v", err)
			}
			o.Name, named = a, true
		case variant == "":
			variant = a
		default:
			return usage("too many words after play (%q)", a)
		}
	}
	v, err := sim.ParseVariant(variant)
	if err != nil {
		return usage("%v", err)
	}
	o.Variant = string(v)
	return o, nil
}

// needsTerminal is the middleware that lets through only sessions with a
// terminal (what activeterm does), and tells any other what to type: ssh
// run without -t and with a command asks for none.
func needsTerminal(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if _, _, ok := sess.Pty(); ok {
			next(sess)
			return
		}
		what, line := "the app", "ssh -t"
		if h, p, err := net.SplitHostPort(sess.LocalAddr().String()); err == nil {
			if p != "22" {
				line += " -p " + p
			}
			line += " " + room.Clean(sess.User()) + "@" + h
		}
		if cmd := sess.Command(); len(cmd) > 0 {
			what = cmd[0]
			line += " " + strings.Join(cmd, " ")
		}
		wish.Fatalln(sess, fmt.Sprintf("learn workshop: %s needs a terminal: use %s", what, line))
	}
}

// commands is the middleware that answers the commands that need no
// terminal (progress, or progress export) and refuses what learn does not run (a shell
// command, scp), before the app's middlewares ask for a terminal.
func (w *Workshop) commands(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		cmd := sess.Command()
		// progress, or progress export as the local command is named
		// (learn progress export): the same JSON.
		if slices.Equal(cmd, []string{"progress"}) || slices.Equal(cmd, []string{"progress", "export"}) {
			w.exportProgress(sess)
			return
		}
		if _, err := firstPage(cmd); err != nil {
			wish.Fatalln(sess, err.Error())
			return
		}
		next(sess)
	}
}

// exportProgress writes the progress the room kept for the session's
// user, as learn progress export writes it.
func (w *Workshop) exportProgress(sess ssh.Session) {
	data, ok := w.room.ProgressOf(sess.User())
	if !ok {
		wish.Fatalln(sess, fmt.Sprintf("learn workshop: no progress kept for %q yet: answer a question or mark a page read first", room.Clean(sess.User())))
		return
	}
	_, _ = sess.Write(data)
	w.alert("%s took their progress (ssh … progress)", room.Clean(sess.User()))
}

// app is the middleware that runs one attendee's learn: it seats them in
// the room (or says why not), builds their Common (their size, their
// colour profile and environment, their own runs on the shared database,
// their progress kept by the room), runs the app through wish's Bubble
// Tea middleware, and, once it has ended, removes their runs (their
// schemas are dropped), leaves the room and prints why it ended.
func (w *Workshop) app(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		if !w.enter() {
			wish.Fatalln(sess, "learn workshop: the workshop is ending")
			return
		}
		defer w.exit()
		// One seat a person: a newer session of theirs takes over this
		// one's, and this one waits for the one it replaces to leave.
		person := personOf(sess.Context())
		mine, older := w.people.take(person)
		defer w.people.leave(mine)
		if older != nil {
			how := "the same key"
			if strings.HasPrefix(person, "connection ") {
				how = "the same connection"
			}
			w.alert("%s opened learn again with %s: their earlier session ends (one seat a person)", room.Clean(sess.User()), how)
			waitFor(sess.Context(), older)
		}
		if mine.isReplaced() { // newer still came while this one waited
			wish.Fatalln(sess, "learn workshop: you opened learn again in a newer session; this one ends (one learn a person)")
			return
		}
		joined := time.Now()
		pty, _, _ := sess.Pty() // needsTerminal let only sessions with one through
		width, height, capped := capSize(pty.Window.Width, pty.Window.Height)
		first, _ := firstPage(sess.Command())
		var prog atomic.Pointer[tea.Program]
		send := func(msg any) {
			if p := prog.Load(); p != nil {
				p.Send(presenterMsg{msg})
			}
		}
		seat, err := w.room.Join(sess.User(), sess.RemoteAddr().String(), width, height, send)
		if err == nil {
			size := fmt.Sprintf("%dx%d", width, height)
			if capped {
				size += fmt.Sprintf(", capped: its terminal is %dx%d", pty.Window.Width, pty.Window.Height)
			}
			w.logf("%s joined from %s (%s)", seat.Name(), host(sess.RemoteAddr()), size)
		}
		if err != nil {
			if full, ok := errors.AsType[*room.FullError](err); ok {
				wish.Fatalln(sess, fmt.Sprintf("learn workshop: the room is full (%s at once); try again when someone leaves, or ask the presenter to raise --max-attendees", common.Count(full.Max, "attendee")))
				return
			}
			wish.Fatalln(sess, "learn workshop: "+err.Error())
			return
		}
		// From here on the app sees the session's terminal capped at
		// MaxWidth x MaxHeight, its window changes too.
		sess = capWindow(sess, seat, w.guard)
		ctx, cancel := context.WithCancel(sess.Context())
		defer cancel()
		getenv := sessionEnv(sess.Environ())
		theme, themeSet := "dark", false
		switch t := getenv("LEARN_THEME"); t {
		case "dark", "light":
			theme, themeSet = t, true
		case "":
		default: // ignored, said once: in the log, and to the attendee under the app
			w.logf("%s sent LEARN_THEME=%q: not dark or light, ignored", seat.Name(), room.Clean(t))
			fmt.Fprintf(sess.Stderr(), "learn workshop: LEARN_THEME=%q is ignored: use dark or light (ssh -o SetEnv=LEARN_THEME=light); your terminal's background decides meanwhile\r\n", room.Clean(t))
		}
		runs := live.NewRuns(ctx, w.db)
		c := &common.Common{
			Ctx: ctx, Width: width, Height: height,
			Styles: common.NewStyles(theme != "light"), Keys: common.NewKeyMap(),
			Theme: theme, DocStyle: markdown.StyleIn(theme, false, getenv),
			DB: w.db, Runs: runs, Progress: common.KeptProgress(seat.Progress(), seat.Keep), Docs: w.docs,
		}
		stopped := make(chan struct{})
		a := &attendeeApp{root: ui.New(c, first), c: c, seat: seat, getenv: getenv,
			idle: w.cfg.Idle, now: time.Now, lastInput: time.Now(), themeSet: themeSet, stopped: stopped,
			onBug: func(bug any, stack []byte) {
				w.alert("%s's app hit a bug (%v): their session ends, and every other goes on", seat.Name(), bug)
				w.logf("the bug in %s's app:\n%s", seat.Name(), stack)
			}}
		opts := append(bubbletea.MakeOptions(sess),
			// The session's input through a guard (ttyin): no attendee's input can panic the decoder.
			tea.WithInput(ttyin.Wrap(sess)),
			tea.WithoutSignalHandler(), // the signals are the presenter's process's
			tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
				switch msg.(type) {
				case tea.SuspendMsg: // as MakeOptions does: no job control over SSH
					return tea.ResumeMsg{}
				case tea.QuitMsg:
					if !a.broken() {
						a.root.Quitting()
					}
				}
				return msg
			}))
		if hook := w.cfg.sessionHook; hook != nil {
			name := seat.Name()
			a.hook = func(msg tea.Msg) { hook(name, msg) }
		}
		p := tea.NewProgram(a, opts...)
		a.quit = p.Quit
		prog.Store(p)
		w.trackProgram(p, true)
		go func() {
			select {
			case <-mine.replaced:
				p.Send(replacedMsg{})
			case <-stopped:
			}
		}()
		func() {
			defer close(stopped) // the program's waiting commands return now, whatever ended it
			bubbletea.MiddlewareWithProgramHandler(func(ssh.Session) *tea.Program { return p })(func(ssh.Session) {})(sess)
		}()
		w.trackProgram(p, false)

		if !a.broken() {
			w.guard(seat.Name()+"'s app on its way out", a.root.Close)
		}
		w.guard(seat.Name()+"'s runs on their way out", runs.Close) // every run's stage removed, its schema dropped
		why := a.ended()
		gone := sess.Context().Err() != nil // the client hung up
		left := "quit"
		switch {
		case why == endedIdle:
			left = "idle for " + w.cfg.Idle.String()
		case why == endedWorkshop:
			left = "the workshop ended"
		case why == endedReplaced:
			left = "opened learn again in a newer session"
		case why == endedBug:
			left = "learn hit a bug"
		case gone:
			left = "disconnected"
		}
		seat.Leave(left)
		w.people.leave(mine) // the newer session of the same person may join now
		w.logf("%s left after %s: %s", seat.Name(), room.Lasted(time.Since(joined)), left)
		if !gone {
			w.farewell(sess, seat, why)
			// The exit status now, before this session stops counting:
			// Close may close the connection as soon as none counts.
			status := 0
			if why == endedBug {
				status = 1
			}
			_ = sess.Exit(status)
		}
		next(sess)
	}
}

// farewell is what an attendee reads once their app has left the screen.
func (w *Workshop) farewell(sess ssh.Session, seat *room.Seat, why ending) {
	host, port := dialled(sess.LocalAddr())
	export := fmt.Sprintf("ssh %s%s@%s progress > learn-progress.json", port, seat.Name(), host)
	var out []string
	switch why {
	case endedIdle:
		out = append(out, fmt.Sprintf("learn workshop: closed after %s without a key. ssh again to come back: your progress is kept.", w.cfg.Idle))
	case endedBug:
		out = append(out, "learn workshop: "+bugView+" The presenter has been told.")
	case endedReplaced:
		out = append(out, "learn workshop: you opened learn again in a newer session (one learn a person): this one ends here, and your progress goes on there.")
	case endedWorkshop:
		out = append(out, "learn workshop: the presenter ended the workshop. Thank you for coming!")
		if p, err := json.Marshal(seat.Progress()); err == nil {
			var compact bytes.Buffer
			if json.Compact(&compact, p) == nil {
				out = append(out, "Your progress (the format of learn progress export), to keep if you like:", compact.String())
			}
		}
	default:
		out = append(out, fmt.Sprintf("learn workshop: see you, %s.", seat.Name()),
			"Your progress stays on this server until the workshop ends. To keep it:", "  "+export)
	}
	_, _ = fmt.Fprint(sess, strings.Join(out, "\n")+"\n")
}

// dialled is how an attendee reached this server at local: its address as
// they dialled it, and "-p PORT " unless the port is 22.
func dialled(local net.Addr) (host, port string) {
	h, p, err := net.SplitHostPort(local.String())
	if err != nil {
		return local.String(), ""
	}
	if p != "22" {
		port = "-p " + p + " "
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]" // user@[v6]
	}
	return h, port
}

// sessionEnv looks a variable up in a session's environment (what the
// client sent, and TERM), never the server's. GLAMOUR_STYLE is taken only
// as one of Glamour's own style names: as a path it would make the server
// read a file an attendee names.
func sessionEnv(environ []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range environ {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		if key == "GLAMOUR_STYLE" && !builtinStyle[v] {
			return ""
		}
		return v
	}
}

var builtinStyle = map[string]bool{"ascii": true, "auto": false, "dark": true, "dracula": true, "light": true, "notty": true, "pink": true, "tokyo-night": true}

// enter counts a session that may still need the workshop's resources;
// false once the workshop is ending.
func (w *Workshop) enter() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ending {
		return false
	}
	w.active++
	return true
}

func (w *Workshop) exit() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active--
	if w.active == 0 {
		w.idleCond.Broadcast()
		if w.ending {
			close(w.drained)
		}
	}
}

// trackProgram keeps (or forgets) a session's program, to tell it when the
// workshop ends.
func (w *Workshop) trackProgram(p *tea.Program, on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if on {
		w.programs[p] = struct{}{}
		if w.ending {
			go p.Send(endMsg{})
		}
		return
	}
	delete(w.programs, p)
}

// guard runs fn, and turns a panic in it (a bug of learn's) into a line
// for the presenter: what was being done, and the panic; the process and
// every other session go on.
func (w *Workshop) guard(what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			w.alert("a bug in %s (%v): left as it is", what, r)
			w.logf("the bug in %s:\n%s", what, debug.Stack())
		}
	}()
	fn()
}
