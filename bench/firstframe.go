package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// tmux runs programs in a tmux server of the benchmark's own (its own
// socket, no configuration file), so the person's sessions are never
// touched and every program gets the same terminal.
type tmux struct {
	socket string
	width  int
	height int
}

func newTmux(width, height int) (*tmux, error) {
	if _, err := exec.LookPath("tmux"); err != nil {
		return nil, fmt.Errorf("the first-frame benchmark needs tmux: %w", err)
	}
	t := &tmux{socket: fmt.Sprintf("learn-bench-%d", os.Getpid()), width: width, height: height}
	// A session that keeps the server up between runs, so that no run pays
	// for starting the server.
	if out, err := t.cmd("new-session", "-d", "-s", "keep", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "sleep 86400").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux: %v\n%s", err, out)
	}
	return t, nil
}

func (t *tmux) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-L", t.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	return cmd
}

// close stops the benchmark's tmux server and removes its socket, which
// tmux leaves behind.
func (t *tmux) close() {
	path, _ := t.cmd("display-message", "-p", "#{socket_path}").Output()
	_ = t.cmd("kill-server").Run()
	if s := strings.TrimSpace(string(path)); s != "" {
		os.Remove(s)
	}
}

// firstFrame launches command (a shell command line) in a new session and
// returns the time from the launch until want is on the screen. It then
// types quit (tmux key names) and waits for the session to end, so that no
// run overlaps the next; a program still running after 30 s is killed.
func (t *tmux) firstFrame(name, command, want string, quit ...string) (time.Duration, error) {
	t0 := time.Now()
	if out, err := t.cmd("new-session", "-d", "-s", name, "-x", fmt.Sprint(t.width), "-y", fmt.Sprint(t.height), command).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("tmux new-session: %v\n%s", err, out)
	}
	defer t.end(name, quit)
	deadline := t0.Add(30 * time.Second)
	for {
		out, err := t.cmd("capture-pane", "-p", "-t", "="+name+":").Output()
		if err == nil && strings.Contains(string(out), want) {
			return time.Since(t0), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%q never appeared on the screen of %s; it shows:\n%s", want, command, out)
		}
	}
}

// interactive launches command in a new session, waits until first is on
// the screen, types keys (tmux key names) at once, and returns the time
// from the launch until after, the keys' effect, is on the screen: how
// soon a person who presses a key the moment the text shows sees it act.
// It then quits as firstFrame does.
func (t *tmux) interactive(name, command, first string, keys []string, after string, quit ...string) (time.Duration, error) {
	t0 := time.Now()
	if out, err := t.cmd("new-session", "-d", "-s", name, "-x", fmt.Sprint(t.width), "-y", fmt.Sprint(t.height), command).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("tmux new-session: %v\n%s", err, out)
	}
	defer t.end(name, quit)
	deadline := t0.Add(30 * time.Second)
	want, typed := first, false
	for {
		out, err := t.cmd("capture-pane", "-p", "-t", "="+name+":").Output()
		if err == nil && strings.Contains(string(out), want) {
			if typed {
				return time.Since(t0), nil
			}
			if err := t.cmd(append([]string{"send-keys", "-t", "=" + name + ":"}, keys...)...).Run(); err != nil {
				return 0, fmt.Errorf("tmux send-keys: %w", err)
			}
			want, typed = after, true
			continue
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%q never appeared on the screen of %s; it shows:\n%s", want, command, out)
		}
	}
}

// end types quit into session name and waits until the session has gone.
func (t *tmux) end(name string, quit []string) {
	if len(quit) > 0 {
		_ = t.cmd(append([]string{"send-keys", "-t", "=" + name + ":"}, quit...)...).Run()
	}
	deadline := time.Now().Add(30 * time.Second)
	for t.cmd("has-session", "-t", "="+name+":").Run() == nil {
		if time.Now().After(deadline) {
			_ = t.cmd("kill-session", "-t", "="+name+":").Run()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
