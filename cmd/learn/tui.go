package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/quiz"
)

// runApp runs the Bubble Tea app. The throwaway PostgreSQL starts in the
// background at once and is stopped and removed on every way out: quit,
// Ctrl-C, SIGTERM, SIGHUP, or an error of the program.
func runApp(g *globals, first openMsg, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	if !isTerminal(stdin) || !isTerminal(stdout) {
		return 2, fmt.Errorf("the app needs a terminal; without one, use the plain commands:\n" +
			"  learn lesson | less          read the lesson as text\n" +
			"  learn interview | less       read the interview card as text\n" +
			"  learn demo lost-answer --json\n" +
			"  learn demo concurrent-copies --copies 10 --json\n" +
			"  learn serve                  the booking API, for curl\n" +
			"  learn doctor                 which PostgreSQL learn would use\n" +
			"  learn progress               your saved progress")
	}
	opts, err := g.pgOptions()
	if err != nil {
		return 2, err
	}
	db := launchDB(opts)
	defer db.Close()
	store, prog, notices := openProgress()
	c := &common{st: newStyles(g.theme != "light"), keys: newKeyMap(), theme: g.theme,
		docStyle: glamourStyle(g.theme, false), db: db, docs: map[docKey]string{},
		store: store, prog: prog, notices: notices}
	if g.present {
		c.present, c.presentSince = true, time.Now()
	}
	m := newModel(c, first)
	// learn handles the signals itself, to quit through the same empty last
	// frame as q does and to exit with the conventional code.
	p := tea.NewProgram(m, tea.WithInput(stdin), tea.WithOutput(stdout), tea.WithoutSignalHandler(),
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			if _, ok := msg.(tea.QuitMsg); ok {
				m.quitting = true
			}
			return msg
		}))
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var caught atomic.Value
	go func() {
		if sig, ok := <-sigs; ok {
			caught.Store(sig)
			p.Quit()
		}
	}()

	_, runErr := p.Run()
	m.close()
	if err := c.saveNow(func(p *quiz.Progress) { p.Resume = m.resumePoint() }); err != nil {
		fmt.Fprintln(stderr, "learn: saving where you left off:", err)
	}
	if err := db.Close(); err != nil {
		fmt.Fprintln(stderr, "learn: stopping PostgreSQL:", err)
	}
	if runErr != nil {
		return 1, runErr
	}
	if sig, ok := caught.Load().(syscall.Signal); ok {
		return 128 + int(sig), nil // 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP
	}
	return 0, nil
}
