package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/dustin/go-humanize/english"
	"github.com/jackc/pgx/v5"

	"github.com/learn-idempotency/learn/sim/trace"
)

// The step-by-step executor runs a transaction in a database transaction
// of its own, one statement at a time: a Plan (Plan.Book) tells each of its
// steps to the engine's trace, so a viewer can play, pause and step the
// real transaction, and holds the request at the points a scenario asks;
// a Transaction of one's own is told by what it reports (tellReport).

// bookStepwise runs the transaction step by step in a transaction of its
// own, then commits what it created, or decides what it found (decide),
// or rolls back what it refused. *held is set when the request reaches the
// barrier.
func (e *Engine) bookStepwise(ctx context.Context, req Request, held *bool) (Result, error) {
	tx, err := e.Pool().BeginTx(ctx, txOptions(e.Design.Isolation))
	if err != nil {
		return Result{}, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		// Rollback after Commit is a no-op; on a cancelled ctx it must still run.
		_ = tx.Rollback(context.WithoutCancel(ctx))
	}()
	t := e.transaction()
	rep, err := t.Book(ctx, &stepTx{Tx: tx, e: e, held: held}, req)
	if refusal, ok := errors.AsType[*Refusal](err); ok {
		return Result{}, e.refuse(ctx, tx, req, refusal)
	}
	if err != nil {
		return Result{}, err // a unique violation is handled by BookTicket
	}
	if _, plan := t.(Plan); !plan {
		// A transaction of one's own tells no step: the engine tells what
		// it reported.
		if err := e.tellReport(ctx, req, rep); err != nil {
			return Result{}, err
		}
	}
	switch rep.State {
	case Existing:
		return e.decide(ctx, tx, req, rep.Booking)
	case Created:
		return e.commit(ctx, tx, req, rep.Booking, held)
	}
	return Result{}, fmt.Errorf("the booking transaction reported %q for key %s: want created or existing", rep.State, req.Key)
}

// decide answers a request whose key already holds prior, found in tx:
// the service's decision (Compare). A replay commits tx, which wrote
// nothing; a conflict rolls it back and is refused with 409.
func (e *Engine) decide(ctx context.Context, tx pgx.Tx, req Request, prior Booking) (Result, error) {
	res, refusal := e.Compare(prior, req)
	if refusal != nil {
		return Result{}, e.refuse(ctx, tx, req, refusal.because(fmt.Sprintf("%s is %s's booking of event %d × %d, not this request (event %d × %d): 409, nothing written",
			prior.PublicID(), prior.UserID, prior.EventID, prior.Quantity, req.EventID, req.Quantity)))
	}
	if err := tx.Commit(ctx); err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	why := map[CompareRule]string{CompareAll: "same user, event and quantity", CompareEventQuantity: "same event and quantity (the user not compared)",
		NoCompare: "no comparison made"}[e.Design.Compare]
	return res, e.step(ctx, req, trace.Event{Kind: trace.KindCommit, BookingID: prior.PublicID(), Replayed: true,
		Label: "write nothing, COMMIT", Text: fmt.Sprintf("%s: replay %s, write nothing, COMMIT", why, prior.PublicID())})
}

// commit commits the booking b that tx created, at the points a scenario
// may hold or crash the request before and after it.
func (e *Engine) commit(ctx context.Context, tx pgx.Tx, req Request, b Booking, held *bool) (Result, error) {
	if err := e.at(ctx, PointBeforeCommit, req, held); err != nil {
		if errors.Is(err, ErrCrash) {
			// A dying process drops its connection; PostgreSQL rolls back.
			_ = tx.Conn().Close(context.WithoutCancel(ctx))
		}
		return Result{}, err
	}
	// From COMMIT until it is told, a copy that reads this booking waits
	// (its lookup): the trace keeps the database's order.
	told := e.Trace.Writing(req.Key.String())
	defer told()
	if err := tx.Commit(ctx); err != nil {
		return Result{}, fmt.Errorf("commit: %w", err)
	}
	if e.OnCommit != nil {
		e.OnCommit()
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindCommit, BookingID: b.PublicID(), Label: "COMMIT",
		Text: fmt.Sprintf("COMMIT: %s and its seats are stored together", b.PublicID())}); err != nil {
		return Result{}, err
	}
	told()
	if err := e.at(ctx, PointAfterCommit, req, held); err != nil {
		return Result{}, err
	}
	return Result{Booking: b}, nil
}

// tellReport tells what a Transaction of one's own reported, as the steps
// of a plan would: the booking it found, or the one it wrote.
func (e *Engine) tellReport(ctx context.Context, req Request, rep TxReport) error {
	b := rep.Booking
	switch rep.State {
	case Existing:
		if err := e.Trace.AwaitWrites(ctx, req.Key.String()); err != nil {
			return err
		}
		return e.step(ctx, req, trace.Event{Kind: trace.KindLookup, Found: true, BookingID: b.PublicID(),
			Label: LabelFindKey + b.PublicID(), Text: fmt.Sprintf("the transaction found key %s already has %s", trace.ShortKey(req.Key), b.PublicID())})
	case Created:
		return e.step(ctx, req, trace.Event{Kind: trace.KindWrite, BookingID: b.PublicID(),
			Label: fmt.Sprintf("seats -%d, insert %s", req.Quantity, b.PublicID()),
			Text:  fmt.Sprintf("the transaction took %s and inserted %s (not committed yet)", english.Plural(req.Quantity, "seat", ""), b.PublicID())})
	}
	return nil
}

// refuse rolls tx back, traces why (the refusal's own words for the
// trace, or its message), and returns refusal.
func (e *Engine) refuse(ctx context.Context, tx pgx.Tx, req Request, refusal *Refusal) error {
	if err := tx.Rollback(ctx); err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	why := refusal.why
	if why == "" {
		why = fmt.Sprintf("%d %s, nothing written", refusal.Status, refusal.Message)
	}
	if err := e.step(ctx, req, trace.Event{Kind: trace.KindRollback, Status: refusal.Status,
		Label: fmt.Sprintf("ROLLBACK (%d)", refusal.Status), Text: "ROLLBACK: " + why}); err != nil {
		return err
	}
	return refusal
}

// Book runs the plan step by step on tx, one statement at a time, and
// reports what it found for req's key, as every Transaction does. Run by
// an engine, it tells each step to the engine's trace (the lock, the
// lookup, the write) and holds the request at PointAfterLookup where the
// scenario asks; on any other Tx it only runs. Refusals are *Refusal
// values; the engine rolls back.
func (p Plan) Book(ctx context.Context, tx Tx, req Request) (TxReport, error) {
	if err := p.valid(); err != nil {
		return TxReport{}, err
	}
	st, _ := tx.(*stepTx) // an engine's: steps are told
	s := newState(p, req, tx, false)
	hold := p.holdsAfter()
	for i, op := range p.Steps {
		row := true
		if sql := op.statement(); sql != "" {
			err := tx.QueryRow(ctx, sql, s.args(op)...).Scan(s.dest(op, nil)...)
			row = !errors.Is(err, pgx.ErrNoRows)
			if err != nil && row {
				return TxReport{}, stepError(p, op, req, err)
			}
		}
		done, refusal, err := s.decide(op, row)
		if err != nil {
			return TxReport{}, err
		}
		if refusal != nil {
			if st != nil && op == OpClaimKey {
				// The claim that found the key taken is a step too: the
				// screen shows this copy's own arrow before its ROLLBACK.
				if err := st.tell(ctx, s, i, op, false); err != nil {
					return TxReport{}, err
				}
			}
			return TxReport{}, refusal
		}
		if st != nil {
			if err := st.tell(ctx, s, i, op, done); err != nil {
				return TxReport{}, err
			}
		}
		if done { // a lookup found the key
			return TxReport{State: Existing, Booking: s.prior}, nil
		}
		if i == hold && st != nil {
			if err := st.e.at(ctx, PointAfterLookup, req, st.held); err != nil {
				return TxReport{}, err
			}
		}
	}
	return s.report(), nil
}

// tell traces step i (op) of plan s.plan as the play screen shows it;
// found says a lookup found the key.
func (t *stepTx) tell(ctx context.Context, s *txState, i int, op Op, found bool) error {
	e, req := t.e, s.req
	begin := ""
	if i == 0 {
		begin = "BEGIN; "
		if l := e.Design.Isolation; l != ReadCommitted {
			begin = "BEGIN " + l.SQL() + "; "
		}
	}
	switch {
	case op == OpClaimKey && !s.claimed:
		return e.step(ctx, req, trace.Event{Kind: trace.KindLock, SQL: op.statement(), Label: fmt.Sprintf("%sclaim key %s → taken", begin, trace.ShortKey(req.Key)),
			Text: fmt.Sprintf("%stry the lock on key %s without waiting (pg_try_advisory_xact_lock): another request with it holds it, still in its transaction, and no booking with it is committed", begin, trace.ShortKey(req.Key))})
	case op == OpClaimKey:
		return e.step(ctx, req, trace.Event{Kind: trace.KindLock, SQL: op.statement(), Label: fmt.Sprintf("%sclaim key %s", begin, trace.ShortKey(req.Key)),
			Text: fmt.Sprintf("%stake the lock on key %s without waiting (pg_try_advisory_xact_lock), or find its booking committed: no other request with it is in flight", begin, trace.ShortKey(req.Key))})
	case op.readsEvent():
		label := fmt.Sprintf("%slock event %d", begin, req.EventID)
		text := fmt.Sprintf("%slock event %d FOR UPDATE (%s left)", begin, req.EventID, english.Plural(s.seatsLeft, "seat", ""))
		if op == OpReadEvent {
			label = fmt.Sprintf("%sread event %d, no lock", begin, req.EventID)
			text = fmt.Sprintf("%sread event %d without a lock (%s left): another copy may be doing the same", begin, req.EventID, english.Plural(s.seatsLeft, "seat", ""))
		}
		return e.step(ctx, req, trace.Event{Kind: trace.KindLock, SQL: op.statement(), Label: label, Text: text})
	case op.findsKey() && !found:
		return e.step(ctx, req, trace.Event{Kind: trace.KindLookup, SQL: op.statement(), Label: LabelFindKey + "none",
			Text: fmt.Sprintf("no booking has key %s yet", trace.ShortKey(req.Key))})
	case op.findsKey():
		// The booking found may be committed but not yet told: tell it first.
		if err := e.Trace.AwaitWrites(ctx, req.Key.String()); err != nil {
			return err
		}
		prior := s.prior
		return e.step(ctx, req, trace.Event{Kind: trace.KindLookup, SQL: op.statement(), Found: true, BookingID: prior.PublicID(),
			Label: LabelFindKey + prior.PublicID(), Text: fmt.Sprintf("key %s already has %s", trace.ShortKey(req.Key), prior.PublicID())})
	case op == OpInsert:
		b := s.booking
		return e.step(ctx, req, trace.Event{Kind: trace.KindWrite, SQL: sqlInsertBooks, BookingID: b.PublicID(),
			Label: fmt.Sprintf("seats -%d, insert %s", req.Quantity, b.PublicID()),
			Text:  fmt.Sprintf("seats %d → %d, insert %s (not committed yet)", s.seatsLeft, s.seatsAfter, b.PublicID())})
	}
	return nil
}
