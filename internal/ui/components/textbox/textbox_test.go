package textbox

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/learn-idempotency/learn/internal/ui/common"
)

// hugePaste is what the hostile trial pasted into the drill's box: 548 KB.
var hugePaste = tea.PasteMsg{Content: strings.Repeat("the same key on every retry, ", 548*1024/29)}

// A paste of any size leaves a box of at most MaxChars characters, its
// beginning kept, and the box says it is full.
func TestAPasteOfAnySizeKeepsTheBoxSmall(t *testing.T) {
	st := common.NewStyles(true)
	box := New(st, "type", 80, 5)
	box.Focus()
	if Full(st, box) != "" {
		t.Fatal("an empty box says it is full")
	}
	Paste(&box, hugePaste)
	if n := box.Length(); n != MaxChars {
		t.Errorf("the box holds %d characters after a paste of %d, want %d", n, len(hugePaste.Content), MaxChars)
	}
	if !strings.HasPrefix(hugePaste.Content, box.Value()[:100]) {
		t.Errorf("the box does not hold the paste's beginning: %q", box.Value()[:100])
	}
	if !strings.Contains(Full(st, box), "at most 2000 characters") {
		t.Errorf("a full box says %q", Full(st, box))
	}
}

// BenchmarkKeyAfterHugePaste times a key typed into a box that took a 548
// KB paste; compare with BenchmarkKeyInShortAnswer (the trial measured 2.4
// s a key before the box was bounded).
//
//	go test -run '^$' -bench Key ./internal/ui/components/textbox/
func BenchmarkKeyAfterHugePaste(b *testing.B) { benchKey(b, hugePaste) }

// BenchmarkKeyInShortAnswer is the baseline: a key after a short answer.
func BenchmarkKeyInShortAnswer(b *testing.B) {
	benchKey(b, tea.PasteMsg{Content: "the same key on every retry"})
}

func benchKey(b *testing.B, paste tea.PasteMsg) {
	box := New(common.NewStyles(true), "type", 80, 5)
	box.Focus()
	Paste(&box, paste)
	key := tea.KeyPressMsg{Code: 'x', Text: "x"}
	bs := tea.KeyPressMsg{Code: tea.KeyBackspace}
	for b.Loop() {
		Type(&box, key)
		Type(&box, bs)
		_ = box.View()
	}
}
