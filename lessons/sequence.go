package lessons

import (
	"fmt"
	"regexp"
	"strings"
)

// Sequence is a sequence diagram read from a Mermaid "sequenceDiagram" block:
// the lanes and the messages between them, in order. The UI draws the
// animated lanes from it.
//
// The Mermaid subset understood: "participant ID" and "actor ID", each
// optionally followed by "as Display Name"; messages "From ARROW To: text"
// with the arrows ->>, -->>, ->, -->, -x, --x, -) and --) and an optional
// activation mark (+ or -) before To; "%%" comments. The statements
// autonumber, activate, deactivate, Note, title and the block keywords (loop,
// alt, else, opt, par, and, critical, break, rect, end) are accepted and
// ignored. Any other line is an error.
type Sequence struct {
	// Participants are the lanes in order of first appearance: declared ones
	// first as written, then any named only in a message (Name = ID).
	Participants []Participant
	// Messages are the arrows in diagram order.
	Messages []Message
}

// Participant is one lane of a sequence diagram.
type Participant struct {
	// ID is the short name messages use, e.g. "B".
	ID string
	// Name is the displayed name, e.g. "Browser"; it equals ID when the
	// diagram gives no "as" name.
	Name string
}

// Message is one arrow of a sequence diagram.
type Message struct {
	// From and To are participant IDs.
	From, To string
	// Text is the label after the colon, e.g. "book 2 seats, key K".
	Text string
	// Reply is true for a dashed arrow (-->>, -->, --x, --)), Mermaid's
	// notation for an answer.
	Reply bool
	// Lost is true for an arrow ending in a cross (-x, --x): the message
	// never arrives.
	Lost bool
	// Self is true when From equals To: work done inside one lane.
	Self bool
}

// Participant returns the participant with the given ID, and whether there
// is one.
func (s *Sequence) Participant(id string) (Participant, bool) {
	for _, p := range s.Participants {
		if p.ID == id {
			return p, true
		}
	}
	return Participant{}, false
}

var (
	seqParticipant = regexp.MustCompile(`^(?:participant|actor)\s+([\w.]+)(?:\s+as\s+(.+))?$`)
	// Longer arrows first: Go's regexp prefers the leftmost alternative.
	seqMessage = regexp.MustCompile(`^([\w.]+?)\s*(-->>|->>|--x|-x|--\)|-\)|-->|->)\s*([+-]?)\s*([\w.]+)\s*:(.*)$`)
	seqIgnored = regexp.MustCompile(`^(?:autonumber|activate|deactivate|note|title|loop|alt|else|opt|par|and|critical|break|rect|end)\b`)
)

// seqError is a problem at a 0-based line index of the block given to
// parseSequence.
type seqError struct {
	line int
	msg  string
}

// parseSequence reads the lines of a Mermaid block. The first statement
// must be "sequenceDiagram"; the diagram must have at least one message.
func parseSequence(lines []string) (*Sequence, *seqError) {
	seq := &Sequence{}
	started := false
	last := 0
	add := func(id, name string) {
		if _, ok := seq.Participant(id); !ok {
			seq.Participants = append(seq.Participants, Participant{ID: id, Name: name})
		}
	}
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "%%") {
			continue
		}
		last = i
		if !started {
			if l != "sequenceDiagram" {
				return nil, &seqError{i, fmt.Sprintf("mermaid block starts with %q; only sequenceDiagram is supported", l)}
			}
			started = true
			continue
		}
		if m := seqParticipant.FindStringSubmatch(l); m != nil {
			if _, dup := seq.Participant(m[1]); dup {
				return nil, &seqError{i, fmt.Sprintf("participant %q declared twice, or after a message used it", m[1])}
			}
			name := strings.TrimSpace(m[2])
			if name == "" {
				name = m[1]
			}
			add(m[1], name)
			continue
		}
		if m := seqMessage.FindStringSubmatch(l); m != nil {
			from, arrow, to := m[1], m[2], m[4]
			add(from, from)
			add(to, to)
			seq.Messages = append(seq.Messages, Message{
				From:  from,
				To:    to,
				Text:  strings.TrimSpace(m[5]),
				Reply: strings.HasPrefix(arrow, "--"),
				Lost:  strings.HasSuffix(arrow, "x"),
				Self:  from == to,
			})
			continue
		}
		if seqIgnored.MatchString(strings.ToLower(l)) {
			continue
		}
		return nil, &seqError{i, fmt.Sprintf("not a sequenceDiagram statement: %q (want \"participant ID as Name\" or \"From->>To: text\")", l)}
	}
	if !started {
		return nil, &seqError{0, "mermaid block is empty; want a sequenceDiagram"}
	}
	if len(seq.Messages) == 0 {
		return nil, &seqError{last, "sequenceDiagram has no messages"}
	}
	return seq, nil
}
