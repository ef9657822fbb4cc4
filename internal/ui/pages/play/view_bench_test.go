package play

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/learn-idempotency/learn/internal/live"
	"github.com/learn-idempotency/learn/internal/ui/common"
	"github.com/learn-idempotency/learn/internal/ui/components/seqdiag"
	"github.com/learn-idempotency/learn/sim"
)

// BenchmarkPlayFrame times drawing one frame of the play screen, with a
// whole lost-answer run kept, at 80x24 and 200x50; the baseline is drawing a
// bordered box of the same size with Lip Gloss, in the same run. At 4x a
// step stays 300 ms on screen and the countdown redraws every 100 ms, so a
// frame must take well under that.
func BenchmarkPlayFrame(b *testing.B) {
	s, _ := sim.Lookup("lost-answer")
	run, err := s.Prepare(b.Context(), sim.DatabaseOf(testDB.NewSchema), sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	if _, err := run.Execute(b.Context()); err != nil {
		b.Fatal(err)
	}
	rows, err := run.Rows(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		c := &common.Common{Styles: common.NewStyles(true), Keys: common.NewKeyMap(), Width: size[0], Height: size[1], DB: live.Existing(testDB)}
		m := New(c, s, sim.Correct)
		m.phase, m.seats, m.speed, m.playing = phaseRunning, run.Setup.Seats, len(speeds)-1, true
		for _, l := range run.Lanes() {
			m.lanes = append(m.lanes, seqdiag.Lane{ID: l.ID, Name: l.Name})
		}
		m.events = run.Trace.Recorded()
		for i, ev := range m.events {
			if ev.Kind.IsStep() {
				m.frames = append(m.frames, frame{ev: i, rows: rows, loaded: true})
			}
		}
		m.view = len(m.frames) - 1
		var baseline float64
		b.Run("baseline/"+sizeName(size), func(b *testing.B) {
			box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Width(size[0]).Height(size[1])
			body := strings.Repeat(strings.Repeat("·", size[0]-2)+"\n", size[1]-2)
			for b.Loop() {
				_ = box.Render(body)
			}
			baseline = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run("play/"+sizeName(size), func(b *testing.B) {
			for b.Loop() {
				_ = m.View()
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/1e6, "ms/frame")
			if baseline > 0 {
				b.ReportMetric(per/baseline, "x-box")
			}
		})
	}
}

func sizeName(s [2]int) string { return fmt.Sprintf("%dx%d", s[0], s[1]) }
