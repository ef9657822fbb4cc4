package workshop

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"image/color"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/jackc/pgx/v5"
	gossh "golang.org/x/crypto/ssh"

	"github.com/learn-idempotency/learn/internal/room"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/progress"
	"github.com/learn-idempotency/learn/quiz"
)

// The code lets in, by password or at the keyboard-interactive prompt,
// whatever its case; anything else is refused with a line that says what
// to do.
func TestJoinCodeLetsInAndNothingElse(t *testing.T) {
	w := startWorkshop(t, Config{})
	for _, auth := range []gossh.AuthMethod{
		password(testCode),
		password("  KQ7M-3HXT "),
		gossh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
			if len(qs) != 1 || qs[0] != "learn workshop join code: " {
				t.Errorf("the prompt: %q", qs)
			}
			return []string{testCode}, nil
		}),
	} {
		c, err := dial(w, "ada", nil, auth)
		if err != nil {
			t.Fatalf("the right code was refused: %v", err)
		}
		c.Close()
	}
	for i, wrong := range []string{"kq7m-3hx", "kq7m-3hxtt", "xxxx-xxxx"} {
		var banner strings.Builder
		if c, err := dial(w, "ada", &banner, password(wrong)); err == nil {
			c.Close()
			t.Fatalf("the code %q let in", wrong)
		}
		want := "learn workshop: that is not the join code: ask the presenter for it (2 tries left in this connection); the join code works at a password prompt too\n"
		if got := banner.String(); got != want {
			t.Errorf("code %d %q: the banner %q, want %q", i, wrong, got, want)
		}
	}
}

// A client without a terminal (ssh from a script) answers every prompt
// with nothing: that is no code given, said so once, answered at once and
// not counted as a wrong code; and one connection that keeps giving wrong
// codes, at the prompt or by password, is refused after wrongPerConn of
// them, each answered after wrongCodeDelay, while another connection from
// the same address gets in with the right code at once.
func TestNoCodeIsNotAWrongCodeAndOneConnectionGetsAFew(t *testing.T) {
	var mu sync.Mutex
	var waits []time.Duration
	w := startWorkshop(t, Config{wrongWait: func(_ context.Context, d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
	}})
	waited := func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(waits)
	}
	asked := 0
	var banner strings.Builder
	if c, err := dial(w, "zed", &banner, gossh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
		asked++
		return make([]string, len(qs)), nil
	}), password(""), password("  ")); err == nil {
		c.Close()
		t.Fatal("no code let in")
	}
	if asked != 1 || !strings.Contains(banner.String(), "learn workshop: no join code given: run ssh from a terminal") {
		t.Errorf("empty answers: asked %d times (want 1), the banner %q", asked, banner.String())
	}
	if got := waited(); len(got) != 0 {
		t.Errorf("empty answers waited %v, want no wait: they are not wrong codes", got)
	}

	asked = 0
	banner.Reset()
	if c, err := dial(w, "zed", &banner, gossh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
		asked++
		return []string{"guess"}, nil
	}), password("guess"), password(testCode)); err == nil {
		c.Close()
		t.Fatal("a connection past its wrong codes was let in")
	}
	if got, want := waited(), slices.Repeat([]time.Duration{wrongCodeDelay}, wrongPerConn); !slices.Equal(got, want) {
		t.Errorf("the wrong codes of one connection waited %v, want %v", got, want)
	}
	if asked != wrongPerConn || !strings.Contains(banner.String(), "learn workshop: that is not the join code either: 3 wrong in this connection; ask the presenter for the code, then connect again\n") {
		t.Errorf("asked %d times (want %d); the banner %q", asked, wrongPerConn, banner.String())
	}
	if c, err := dial(w, "ada", nil, password(testCode)); err != nil {
		t.Errorf("another connection from the address with the right code: %v", err)
	} else {
		c.Close()
	}
	if got := waited(); len(got) != wrongPerConn {
		t.Errorf("the right code waited: %v", got[wrongPerConn:])
	}
}

// At the keyboard-interactive prompt a wrong code is told in the next
// prompt (its instruction, and the prompt itself, which OpenSSH shows at
// any LogLevel), with the tries left; the right code then lets in.
func TestWrongCodeIsToldAtTheNextPrompt(t *testing.T) {
	w := startWorkshop(t, Config{})
	var asked []string
	c, err := dial(w, "ada", nil, gossh.KeyboardInteractive(func(_, instruction string, qs []string, _ []bool) ([]string, error) {
		asked = append(asked, instruction+" | "+strings.Join(qs, " "))
		if len(asked) == 1 {
			return []string{"guess"}, nil
		}
		return []string{testCode}, nil
	}))
	if err != nil {
		t.Fatalf("the right code at the second prompt was refused: %v (asked %q)", err, asked)
	}
	c.Close()
	want := []string{
		" | learn workshop join code: ",
		"learn workshop: that is not the join code: ask the presenter for it (2 tries left in this connection) | learn workshop join code (that was not it; 2 tries left): ",
	}
	if !slices.Equal(asked, want) {
		t.Errorf("the prompts:\n%q\nwant\n%q", asked, want)
	}
}

// However many wrong codes come from an address, and however fast, the
// right code from it lets in at once and a key that gave the code before
// lets in alone: a stranger's guesses never lock out the attendees behind
// the same address (a NAT, a load balancer). Before, ten wrong codes
// blocked the address, trusted keys included ("too many wrong join codes
// from your address").
func TestWrongCodesFromAnAddressLockNobodyOut(t *testing.T) {
	guessing := make(chan struct{}) // closed when the guesses stop
	var held sync.WaitGroup
	w := startWorkshop(t, Config{wrongWait: func(ctx context.Context, _ time.Duration) {
		// Each wrong code waits until the test is done with the others:
		// the guesses are all in flight while the attendees come.
		select {
		case <-guessing:
		case <-ctx.Done():
		}
	}})
	signer := newSigner(t)
	if c, err := dial(w, "ada", nil, gossh.PublicKeys(signer), password(testCode)); err != nil {
		t.Fatalf("ada's key and the code: %v", err)
	} else {
		c.Close()
	}
	// Forty connections from the same address guess, three codes each,
	// the next guesser starting as soon as the last was refused.
	const guessers = 40
	refused := make(chan error, guessers)
	for i := range guessers {
		held.Add(1)
		go func() {
			defer held.Done()
			c, err := dial(w, "eve"+itoa(i), nil, gossh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
				return []string{"guess-" + itoa(i)}, nil
			}))
			if err == nil {
				c.Close()
			}
			refused <- err
		}()
	}
	waitUntil(t, "the guesses to be in flight", func() string { return "" }, func(string) bool {
		return feedContains(w, "a wrong join code from 127.0.0.1")
	})
	for i := range 3 {
		if c, err := dial(w, "ben"+itoa(i), nil, password(testCode)); err != nil {
			t.Errorf("a newcomer with the right code, from the guessing address: %v", err)
		} else {
			c.Close()
		}
	}
	if c, err := dial(w, "ada", nil, gossh.PublicKeys(signer)); err != nil {
		t.Errorf("ada's trusted key, from the guessing address: %v", err)
	} else {
		c.Close()
	}
	close(guessing)
	held.Wait()
	for range guessers {
		if err := <-refused; err == nil {
			t.Error("a guess let in")
		}
	}
	waitUntil(t, "the feed to count the wrong codes", func() string { return "" }, func(string) bool {
		return feedContains(w, "10 wrong join codes from 127.0.0.1 so far")
	})
}

// feedContains says whether a line of the room's feed holds s.
func feedContains(w *Workshop, s string) bool {
	for _, e := range w.Room().Snapshot(room.FeedSize).Feed {
		if strings.Contains(e.Text, s) {
			return true
		}
	}
	return false
}

// A key is let in on its own only once its holder has signed with it and
// given the code.
func TestPublicKeyAfterTheCode(t *testing.T) {
	w := startWorkshop(t, Config{})
	signer := newSigner(t)
	other := newSigner(t)
	if c, err := dial(w, "ada", nil, gossh.PublicKeys(signer)); err == nil {
		c.Close()
		t.Fatal("an unknown key let in without the code")
	}
	c, err := dial(w, "ada", nil, gossh.PublicKeys(signer), password(testCode))
	if err != nil {
		t.Fatalf("key then code: %v", err)
	}
	c.Close()
	c, err = dial(w, "ada", nil, gossh.PublicKeys(signer))
	if err != nil {
		t.Fatalf("the key, once its holder gave the code: %v", err)
	}
	c.Close()
	if c, err := dial(w, "ada", nil, gossh.PublicKeys(other)); err == nil {
		c.Close()
		t.Fatal("another key let in on the first one's code")
	}
}

// An attendee gets the app at their own size; the room knows where they
// are and follows their window.
func TestAttendeeGetsTheAppAtTheirSize(t *testing.T) {
	w := startWorkshop(t, Config{})
	a := attend(t, w, "ada", 100, 30, "", nil)
	a.waitFor("Lesson: Idempotency", "Play: the lost answer")
	waitUntil(t, "ada 100x30 in the room", func() string {
		s := w.Room().Snapshot(0)
		if len(s.Attendees) != 1 {
			return ""
		}
		at := s.Attendees[0]
		return at.Name + " " + itoa(at.Width) + "x" + itoa(at.Height) + " " + at.Title
	}, func(s string) bool { return s == "ada 100x30 learn" })
	if err := a.sess.WindowChange(40, 120); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the room to see 120x40", func() string {
		at := w.Room().Snapshot(0).Attendees[0]
		return itoa(at.Width) + "x" + itoa(at.Height)
	}, func(s string) bool { return s == "120x40" })
}

// An attendee's home screen says the database is the workshop's, not
// where it lives on the presenter's machine (its paths, its user).
func TestAttendeeSeesNoneOfTheHostsPaths(t *testing.T) {
	w := startWorkshop(t, Config{})
	a := attend(t, w, "ada", 200, 40, "", nil)
	scr := a.waitFor("PostgreSQL ready in", "the workshop's, shared by the room; your runs use schemas of your own")
	server := testDB.Describe()
	if !strings.Contains(server, "/") {
		t.Fatalf("the server's own line %q names no path: the check below would mean nothing", server)
	}
	for _, leak := range []string{server, "cluster in", "running as", "/bin"} {
		if strings.Contains(scr, leak) {
			t.Errorf("ada's home screen shows %q:\n%s", leak, scr)
		}
	}
}

// An attendee's app follows their terminal's background: a light one
// gets the light theme, asked without blocking anything.
func TestLightTerminalGetsTheLightTheme(t *testing.T) {
	w := startWorkshop(t, Config{})
	dark := attend(t, w, "dee", 80, 24, "", color.Black)
	light := attend(t, w, "lee", 80, 24, "", color.White)
	dark.waitFor("Lesson: Idempotency")
	light.waitFor("Lesson: Idempotency")
	// The titles' colour is the theme's accent, in the session's profile
	// (xterm-256color: 256 colours).
	sgr := func(hex string) string {
		return fmt.Sprintf("38;5;%d", colorprofile.ANSI256.Convert(lipgloss.Color(hex)).(ansi.IndexedColor))
	}
	lightAccent, darkAccent := sgr("#5A3FD6"), sgr("#B4A2FF")
	waitUntil(t, "the light accent in lee's app", light.raw.String, func(s string) bool { return strings.Contains(s, lightAccent) })
	if s := dark.raw.String(); strings.Contains(s, lightAccent) || !strings.Contains(s, darkAccent) {
		t.Errorf("a dark terminal's app: light accent %v, dark accent %v", strings.Contains(s, lightAccent), strings.Contains(s, darkAccent))
	}
}

// NO_COLOR is the session's: an attendee who sends it gets no colour, the
// others keep theirs, whatever the server's environment says.
func TestNoColorIsTheSessions(t *testing.T) {
	t.Setenv("NO_COLOR", "") // the server's own says nothing
	w := startWorkshop(t, Config{})
	plainClient, err := dial(w, "nora", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	plain := attendOn(t, plainClient, 80, 24, "lesson", nil, "NO_COLOR", "1")
	// NO_COLOR wins over a theme named, as in a local terminal.
	themedClient, err := dial(w, "theo", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	themed := attendOn(t, themedClient, 80, 24, "", nil, "LEARN_THEME", "light", "NO_COLOR", "1")
	colour := attend(t, w, "cole", 80, 24, "lesson", nil)
	plain.waitFor("Idempotency", "In 1 minute")
	themed.waitFor("Lesson: Idempotency", "Play: the lost answer")
	colour.waitFor("Idempotency", "In 1 minute")
	sgrColour := regexp.MustCompile(`\x1b\[[0-9;]*[34]8;[25];`)
	for _, a := range []*attendee{plain, themed} {
		if sgrColour.MatchString(a.raw.String()) {
			t.Errorf("a NO_COLOR session got colours: %q", tail(a.raw.String()))
		}
	}
	if !sgrColour.MatchString(colour.raw.String()) {
		t.Error("the other session got no colour: the check above would mean nothing")
	}
}

// A LEARN_THEME that is neither dark nor light is ignored, and the
// attendee is told once which values it takes.
func TestUnknownThemeIsSaidOnce(t *testing.T) {
	w := startWorkshop(t, Config{})
	client, err := dial(w, "bo", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	a := attendOn(t, client, 80, 24, "", nil, "LEARN_THEME", "bogus")
	a.waitFor("Lesson: Idempotency")
	a.press("q")
	if err := a.ended(); err != nil {
		t.Fatalf("the session ended with %v", err)
	}
	all := a.stderr.String() + a.raw.String()
	if want := `learn workshop: LEARN_THEME="bogus" is ignored: use dark or light`; strings.Count(all, want) != 1 {
		t.Errorf("the attendee was told %d times %q; their terminal got:\n%q", strings.Count(all, want), want, tail(all))
	}
}

// No shell, no commands but learn's, no port forwarding, no sftp, and no
// app without a terminal.
func TestNothingButLearn(t *testing.T) {
	w := startWorkshop(t, Config{})
	c, err := dial(w, "mallory", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, cmd := range []string{"ls -la /", "scp -t /tmp", "sh -c id", "play no-such-scenario"} {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var stderr, stdout strings.Builder
		s.Stderr, s.Stdout = &stderr, &stdout
		err = s.Run(cmd)
		if exitStatus(err) != 1 || !strings.Contains(stderr.String(), "learn workshop:") || stdout.Len() != 0 {
			t.Errorf("%q: exit %v, stdout %q, stderr %q; want exit 1 and a line saying what runs", cmd, err, stdout.String(), stderr.String())
		}
	}
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestSubsystem("sftp"); err == nil {
		t.Error("the sftp subsystem was granted")
	}
	s.Close()
	if conn, err := c.Dial("tcp", w.Addr().String()); err == nil {
		conn.Close()
		t.Error("local port forwarding was allowed")
	}
	if ln, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Error("remote port forwarding was allowed")
	}
	s, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s.Stdout, s.Stderr = &out, &out
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(w.Addr().String())
	if err := s.Wait(); exitStatus(err) != 1 || strings.TrimSpace(out.String()) != "learn workshop: the app needs a terminal: use ssh -t -p "+port+" mallory@127.0.0.1" {
		t.Errorf("a shell without a terminal: exit %v, %q", err, out.String())
	}
	// ssh with a command asks for no terminal unless told (-t).
	s, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	s.Stdout, s.Stderr = &out, &out
	if err := s.Run("play lost-answer --variant broken"); exitStatus(err) != 1 ||
		strings.TrimSpace(out.String()) != "learn workshop: play needs a terminal: use ssh -t -p "+port+" mallory@127.0.0.1 play lost-answer --variant broken" {
		t.Errorf("play without a terminal: exit %v, %q", err, out.String())
	}
	if n := len(w.Room().Snapshot(0).Attendees); n != 0 {
		t.Errorf("%d attendees seated by sessions that got nothing", n)
	}
}

// Over the room's limit an attendee is told so in one line, and the one
// already in goes on.
func TestFullRoomTurnsAwayWithALine(t *testing.T) {
	w := startWorkshop(t, Config{MaxAttendees: 1})
	ada := attend(t, w, "ada", 80, 24, "", nil)
	ada.waitFor("Lesson: Idempotency")
	ben := attend(t, w, "ben", 80, 24, "", nil)
	if err := ben.ended(); exitStatus(err) != 1 {
		t.Errorf("the attendee over the limit: %v, want exit status 1", err)
	}
	want := "learn workshop: the room is full (1 attendee at once); try again when someone leaves, or ask the presenter to raise --max-attendees\n"
	if got := ben.stderr.String(); strings.ReplaceAll(got, "\r", "") != want {
		t.Errorf("told %q, want %q", got, want)
	}
	ada.press("down")
	ada.waitFor("Interview card") // still answers
}

// A flood of sessions from one address: past the burst, each is refused
// with a line.
func TestFloodOfSessionsIsRefusedWithALine(t *testing.T) {
	w := startWorkshop(t, Config{sessions: &sessionRate{perSecond: 0, burst: 3}})
	c, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var refused []string
	for range 5 {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		s.Stderr = &stderr
		_ = s.Run("progress")
		if strings.Contains(stderr.String(), "too many new sessions") {
			refused = append(refused, stderr.String())
		}
	}
	if len(refused) != 2 || refused[0] != "learn workshop: too many new sessions from your address at once; wait a few seconds, then ssh again\r\n" {
		t.Errorf("refused %d of 5 sessions past a burst of 3 (want 2): %q", len(refused), refused)
	}
}

// An attendee who presses no key for the idle time is told, and their
// session ends; their progress stays.
func TestIdleSessionEnds(t *testing.T) {
	w := startWorkshop(t, Config{Idle: 300 * 1e6}) // 300ms
	a := attend(t, w, "ada", 80, 24, "", nil)
	if err := a.ended(); err != nil {
		t.Errorf("an idle session ended with %v, want exit status 0", err)
	}
	if !strings.Contains(a.raw.String(), "learn workshop: closed after 300ms without a key. ssh again to come back: your progress is kept.") {
		t.Errorf("the idle attendee was not told; the end of their output: %q", tail(a.raw.String()))
	}
	if s := w.Room().Snapshot(5); s.Connected() != 0 || !strings.Contains(s.Feed[len(s.Feed)-1].Text, "idle for 300ms") {
		t.Errorf("the room after the idle session: %+v", s)
	}
}

func tail(s string) string { return s[max(0, len(s)-300):] }

// An attendee's runs are their own schemas, dropped when they hang up.
func TestDisconnectDropsTheAttendeesSchema(t *testing.T) {
	w := startWorkshop(t, Config{})
	before := testDB.Schemas()
	a := attend(t, w, "ada", 80, 24, "play lost-answer", nil)
	a.waitFor("step 1 ·", "book 2, key")
	mine := slices.DeleteFunc(testDB.Schemas(), func(s string) bool { return slices.Contains(before, s) })
	if len(mine) != 1 {
		t.Fatalf("ada's play screen runs in %v, want one schema of its own", mine)
	}
	if !schemaExists(t, mine[0]) {
		t.Fatalf("%s is not in PostgreSQL", mine[0])
	}
	a.client.Close()
	waitUntil(t, "ada's schema to be dropped", func() string { return strings.Join(testDB.Schemas(), " ") },
		func(s string) bool { return !strings.Contains(s, mine[0]) })
	if schemaExists(t, mine[0]) {
		t.Errorf("%s is still in PostgreSQL", mine[0])
	}
}

// The presenter sends everyone to a question; an answer reaches the poll;
// stepping together moves every play screen; progress exports as JSON.
func TestRoomFollowsThePresenter(t *testing.T) {
	w := startWorkshop(t, Config{})
	ada := attend(t, w, "ada", 100, 30, "", nil)
	ben := attend(t, w, "ben", 100, 30, "", nil)
	ada.waitFor("Lesson: Idempotency")
	ben.waitFor("Lesson: Idempotency")

	q := quiz.Checkpoint().Questions[2]
	w.Room().OpenPoll(quiz.SetCheckpoint, q.ID)
	if n := w.Room().SendAll(common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 2}}, "sent everyone to Checkpoint 3"); n != 2 {
		t.Fatalf("sent to %d, want 2", n)
	}
	ada.waitFor("question 3 of 5")
	ben.waitFor("question 3 of 5")
	// The choices come shuffled: move to where the right one is shown.
	scr := waitUntil(t, "the choices on ada's screen", ada.screen, func(s string) bool {
		for _, c := range q.Choices {
			if !strings.Contains(strings.Join(strings.Fields(s), " "), c) {
				return false
			}
		}
		return true
	})
	for range shownAt(scr, q.Choices, q.Correct[0]) {
		ada.press("down")
	}
	ada.press("enter")
	ada.waitFor("Right.")
	poll := waitUntil(t, "ada's answer in the poll", func() string {
		p := w.Room().Snapshot(0).Poll
		b, _ := json.Marshal(p)
		return string(b)
	}, func(s string) bool {
		return strings.Contains(s, `"Answered":1`) && strings.Contains(s, `"Waiting":["ben"]`)
	})
	t.Logf("poll: %s", poll)

	w.Room().SendAll(common.Open{Place: progress.Place{Page: progress.PagePlay, Name: "lost-answer"}}, "sent everyone to the lost answer")
	ada.waitFor("step 1 ·", "book 2, key")
	ben.waitFor("step 1 ·", "book 2, key")
	w.Room().SendAll(common.Step{}, "stepped")
	ada.waitFor("step 2 ·", "BEGIN; lock event 1")
	ben.waitFor("step 2 ·", "BEGIN; lock event 1")
	if used := w.Budget().Stats().Used; used == 0 {
		t.Fatal("the play screens hold no connections: the check below would mean nothing")
	}

	// The next screen the presenter sends replaces the play screens: their
	// runs stop and give their connections back.
	w.Room().SendAll(common.Open{Place: progress.Place{Page: progress.PageQuiz, Name: quiz.SetCheckpoint, Step: 3}}, "")
	ada.waitFor("question 4 of 5")
	ben.waitFor("question 4 of 5")
	waitUntil(t, "the play screens' runs to give their connections back", func() string { return itoa(w.Budget().Stats().Used) },
		func(s string) bool { return s == "0" })

	c, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Output("progress")
	if err != nil {
		t.Fatalf("progress: %v", err)
	}
	var p progress.Progress
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("progress is not JSON: %v\n%s", err, out)
	}
	if a, ok := p.Sets[quiz.SetCheckpoint].Answers[q.ID]; !ok || a.Score != 1 {
		t.Errorf("exported progress %s lacks ada's answer", out)
	}
	// The local command's name, learn progress export, gives the same.
	s, err = c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	export, err := s.Output("progress export")
	if err != nil || !bytes.Equal(export, out) {
		t.Errorf("progress export: %v\n%s\nwant what progress gave:\n%s", err, export, out)
	}
}

// Close tells every attendee, ends every session, drops their schemas and
// summarises the room.
func TestCloseEndsEverySessionAndLeavesTheSummary(t *testing.T) {
	before := testDB.Schemas()
	cfg := Config{Addr: "127.0.0.1:0", Server: testDB, Code: testCode, HostKey: t.TempDir() + "/key", Logf: t.Logf}
	w, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ada := attend(t, w, "ada", 80, 24, "play lost-answer", nil)
	ben := attend(t, w, "ben", 80, 24, "", nil)
	ada.waitFor("book 2, key")
	ben.waitFor("Lesson: Idempotency")
	sum, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []*attendee{ada, ben} {
		if err := a.ended(); err != nil {
			t.Errorf("a session ended with %v, want exit status 0", err)
		}
		if !strings.Contains(a.raw.String(), "learn workshop: the presenter ended the workshop. Thank you for coming!") {
			t.Errorf("an attendee was not told; the end of their output: %q", tail(a.raw.String()))
		}
	}
	if left := slices.DeleteFunc(testDB.Schemas(), func(s string) bool { return slices.Contains(before, s) }); len(left) != 0 {
		t.Errorf("schemas left after Close: %v", left)
	}
	if len(sum.Attendees) != 2 || sum.Attendees[0].Name != "ada" || sum.Attendees[1].Name != "ben" || sum.Ended.IsZero() {
		t.Errorf("summary %+v", sum)
	}
	if c, err := dial(w, "late", nil, password(testCode)); err == nil {
		c.Close()
		t.Error("a connection after Close was let in")
	}
	path, err := WriteSummary(t.TempDir(), sum)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary in %s", path)
}

func itoa(n int) string { return fmt.Sprint(n) }

func newSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// schemaExists asks PostgreSQL whether it has the schema name.
func schemaExists(t *testing.T, name string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testDB.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// The runs' budget is what the server allows, less learn's spare, or the
// share the workshop was given when less.
func TestBudgetIsTheServersOrTheShare(t *testing.T) {
	for _, tc := range []struct{ limit, share, total int }{
		{615, 0, 611},
		{615, 300, 300},
		{615, 900, 611},
		{64, 0, 60},
	} {
		s := budgetFor(tc.limit, tc.share).Stats()
		if s.Total != tc.total {
			t.Errorf("budgetFor(%d, %d): total %d, want %d", tc.limit, tc.share, s.Total, tc.total)
		}
	}
	if raceConns != 103 || runConns != 8 {
		t.Errorf("a race of 100 copies holds %d connections, the largest other run %d; the README says 103 and 8", raceConns, runConns)
	}
	if got := MaxConnectionsFor(50); got != 618 {
		t.Errorf("MaxConnectionsFor(50) = %d; the README says 618", got)
	}
}

// A client may ask for any window size; the app is drawn at most at
// MaxWidth x MaxHeight (the room sees that size, marked capped), at the
// start and after a resize, and stays usable.
func TestHugeWindowIsCapped(t *testing.T) {
	w := startWorkshop(t, Config{})
	size := func(name string) func() string {
		return func() string {
			for _, at := range w.Room().Snapshot(0).Attendees {
				if at.Name == name {
					return fmt.Sprintf("%dx%d capped %v", at.Width, at.Height, at.Capped)
				}
			}
			return ""
		}
	}
	is := func(want string) func(string) bool { return func(s string) bool { return s == want } }

	client, err := dial(w, "ada", nil, password(testCode))
	if err != nil {
		t.Fatal(err)
	}
	// 3000x1500 asked; the terminal that reads it is the capped size.
	ada := attendAsking(t, client, 3000, 1500, MaxWidth, MaxHeight, "", nil)
	scr := ada.waitFor("Lesson: Idempotency", "Play: the lost answer", "? help")
	waitUntil(t, "ada at the capped size in the room", size("ada"), is("500x200 capped true"))
	// Drawn at 200 rows: the footer is on the terminal's last line.
	if lines := strings.Split(scr, "\n"); len(lines) < MaxHeight || !strings.Contains(lines[MaxHeight-1], "? help") {
		t.Errorf("the footer is not on line %d of ada's screen:\n%s", MaxHeight, scr)
	}
	ada.press("enter") // the lesson
	ada.waitFor("In 1 minute")

	ben := attend(t, w, "ben", 100, 30, "", nil)
	ben.waitFor("Lesson: Idempotency")
	waitUntil(t, "ben at 100x30", size("ben"), is("100x30 capped false"))
	if err := ben.sess.WindowChange(1500, 3000); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "ben's resize capped", size("ben"), is("500x200 capped true"))
	ben.scr.Resize(MaxWidth, MaxHeight) // what ben's terminal shows of the app
	ben.press("enter")
	ben.waitFor("In 1 minute")
	if err := ben.sess.WindowChange(40, 120); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "ben back at 120x40", size("ben"), is("120x40 capped false"))
}

// shownAt is the position on screen of choices[item] among choices, which
// must all be on screen (the quiz shows them shuffled).
func shownAt(screen string, choices []string, item int) int {
	flat := strings.Join(strings.Fields(screen), " ")
	at, pos := strings.Index(flat, choices[item]), 0
	for _, c := range choices {
		if strings.Index(flat, c) < at {
			pos++
		}
	}
	return pos
}
