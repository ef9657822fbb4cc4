package lessons

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSequence(t *testing.T) {
	tests := []struct {
		name         string
		src          string
		participants []Participant
		messages     []Message
	}{
		{
			name: "every arrow",
			src: `sequenceDiagram
  participant C as Client app
  participant S
  C->>S: solid
  S-->>C: dashed
  C-xS: lost
  S--xC: lost reply
  C->S: open
  S-->C: open reply
  C-)S: async
  S--)C: async reply`,
			participants: []Participant{{"C", "Client app"}, {"S", "S"}},
			messages: []Message{
				{From: "C", To: "S", Text: "solid"},
				{From: "S", To: "C", Text: "dashed", Reply: true},
				{From: "C", To: "S", Text: "lost", Lost: true},
				{From: "S", To: "C", Text: "lost reply", Reply: true, Lost: true},
				{From: "C", To: "S", Text: "open"},
				{From: "S", To: "C", Text: "open reply", Reply: true},
				{From: "C", To: "S", Text: "async"},
				{From: "S", To: "C", Text: "async reply", Reply: true},
			},
		},
		{
			name: "implicit participants, activations, comments and ignored statements",
			src: `%% a comment before the type
sequenceDiagram
  autonumber
  Alice->>+Bob: hi: there
  Note right of Bob: thinking
  loop every second
    Bob->>Bob: tick
  end
  Bob-->>-Alice: bye
  actor Carol as Carol the user
  Carol->>Alice: x`,
			participants: []Participant{{"Alice", "Alice"}, {"Bob", "Bob"}, {"Carol", "Carol the user"}},
			messages: []Message{
				{From: "Alice", To: "Bob", Text: "hi: there"},
				{From: "Bob", To: "Bob", Text: "tick", Self: true},
				{From: "Bob", To: "Alice", Text: "bye", Reply: true},
				{From: "Carol", To: "Alice", Text: "x"},
			},
		},
		{
			name: "ids ending in x and spaces around arrows",
			src: `sequenceDiagram
  Box --x Fox : lost
  Fox ->> Fox : self`,
			participants: []Participant{{"Box", "Box"}, {"Fox", "Fox"}},
			messages: []Message{
				{From: "Box", To: "Fox", Text: "lost", Reply: true, Lost: true},
				{From: "Fox", To: "Fox", Text: "self", Self: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := parseSequence(strings.Split(tt.src, "\n"))
			if err != nil {
				t.Fatalf("line %d: %s", err.line, err.msg)
			}
			if !slices.Equal(seq.Participants, tt.participants) {
				t.Errorf("participants = %+v\nwant %+v", seq.Participants, tt.participants)
			}
			if !slices.Equal(seq.Messages, tt.messages) {
				t.Errorf("messages = %+v\nwant %+v", seq.Messages, tt.messages)
			}
		})
	}
}

func TestParseSequenceErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int // 0-based line in src
		msg       string
	}{
		{"empty block", "\n  \n", 0, "empty"},
		{"other diagram", "graph TD\n  A-->B", 0, `starts with "graph TD"`},
		{"no messages", "sequenceDiagram\n  participant A", 1, "no messages"},
		{"message without colon", "sequenceDiagram\n  A->>B hello", 1, `"A->>B hello"`},
		{"unknown arrow", "sequenceDiagram\n  A=>>B: hello", 1, "not a sequenceDiagram statement"},
		{"arrow without target", "sequenceDiagram\n  A->>: hello", 1, "not a sequenceDiagram statement"},
		{"participant without id", "sequenceDiagram\n  participant\n  A->>B: x", 1, "not a sequenceDiagram statement"},
		{"participant declared twice", "sequenceDiagram\n  participant A\n  participant A as Again\n  A->>A: x", 2, "declared twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSequence(strings.Split(tt.src, "\n"))
			if err == nil {
				t.Fatal("no error")
			}
			if err.line != tt.line || !strings.Contains(err.msg, tt.msg) {
				t.Errorf("error at line %d: %s; want line %d and %q", err.line, err.msg, tt.line, tt.msg)
			}
		})
	}
}

func TestSequenceParticipantLookup(t *testing.T) {
	seq := &Sequence{Participants: []Participant{{"B", "Browser"}}}
	if p, ok := seq.Participant("B"); !ok || p.Name != "Browser" {
		t.Errorf("Participant(B) = %+v, %v", p, ok)
	}
	if _, ok := seq.Participant("Z"); ok {
		t.Error("Participant(Z) found")
	}
}
