package trace

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SQLTracer is a pgx.QueryTracer that puts every statement an API instance
// sends, as sent, on the trace as a KindSQL event of its lane (the SQL
// pane). BEGIN, COMMIT and ROLLBACK are statements too.
type SQLTracer struct {
	Trace *Trace
	Lane  string
}

// TraceQueryStart emits the statement; it never blocks the query for the
// viewer.
func (t *SQLTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	_ = t.Trace.Emit(ctx, Event{Kind: KindSQL, From: t.Lane, To: LanePostgres,
		SQL: oneLine(data.SQL), Text: withArgs(oneLine(data.SQL), data.Args)})
	return ctx
}

// TraceQueryEnd does nothing: errors reach the trace through the engine.
func (t *SQLTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// oneLine folds runs of white space so a statement fits one pane line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// withArgs appends the bound values: "… WHERE id = $1  [$1=7]".
func withArgs(sql string, args []any) string {
	if len(args) == 0 {
		return sql
	}
	parts := make([]string, len(args))
	for i, a := range args {
		if t, ok := a.(interface{ Format(string) string }); ok { // time.Time
			a = t.Format("15:04:05")
		}
		parts[i] = fmt.Sprintf("$%d=%v", i+1, a)
	}
	return sql + "  [" + strings.Join(parts, " ") + "]"
}
