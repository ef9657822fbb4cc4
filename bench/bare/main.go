// Command bare is the baseline of the first-frame benchmark: a Bubble Tea v2
// program that draws one line in the alternate screen, says which key was
// pressed (for the time to interactive), and quits on q.
package main

import (
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
)

type model struct{ pressed string }

func (model) Init() tea.Cmd { return nil }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		if k.String() == "q" || k.String() == "ctrl+c" {
			return m, tea.Quit
		}
		m.pressed = k.String()
	}
	return m, nil
}

func (m model) View() tea.View {
	line := "bare Bubble Tea v2: ready"
	if m.pressed != "" {
		line = "bare Bubble Tea v2: pressed " + m.pressed
	}
	v := tea.NewView(line)
	v.AltScreen = true
	return v
}

func main() {
	if _, err := tea.NewProgram(model{}).Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
