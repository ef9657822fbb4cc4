package lessons

import (
	"errors"
	"fmt"
)

// ErrUnknownPage is wrapped by the error [Get] returns for a slug that names
// no page.
var ErrUnknownPage = errors.New("no such page")

// ParseError reports a page that does not follow the page format described
// in the package documentation.
type ParseError struct {
	// File is the page's path inside the embedded file system, e.g.
	// "pages/idempotency.md".
	File string
	// Line is the 1-based line in File, or 0 when the problem concerns the
	// whole page (for example a missing section).
	Line int
	// Msg says what is wrong and, where it helps, what to write instead.
	Msg string
}

// Error formats the problem as "file:line: message".
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}
