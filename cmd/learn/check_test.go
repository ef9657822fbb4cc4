package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/learn-idempotency/learn/sim/check"
)

// runCheck runs learn check with args and returns its stdout, stderr and
// exit code.
func runCheck(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"check"}, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// As a new user would: learn check --init writes the config, learn serve
// runs on two API instances, and learn check passes every scenario of the
// lesson's design, exit 0; against learn serve --set
// lookup=after-seat-check the last seats and the retry after a sell-out
// fail with their consequence, exit 1, and --json says the same.
func TestCheckAgainstServe(t *testing.T) {
	bin := buildLearn(t)
	example, _, code := runCheck(t, bin, "--init")
	if code != 0 || example != check.Example {
		t.Fatalf("learn check --init exited %d and wrote another config", code)
	}
	config := func(t *testing.T, p *serveProc) string {
		f := filepath.Join(t.TempDir(), "check.toml")
		urls := fmt.Sprintf("urls = [%q, %q]", p.instances[0], p.instances[1])
		if err := os.WriteFile(f, []byte(strings.Replace(example, `urls = ["http://127.0.0.1:8081", "http://127.0.0.1:8082"]`, urls, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}

	lesson := startServe(t, bin, "--addr", "127.0.0.1:0", "--instance-addr", freeAddr(t), "--instance-addr", freeAddr(t))
	out, errOut, code := runCheck(t, bin, "--config", config(t, lesson))
	if code != 0 || strings.Count(out, "  ✓ ") != len(check.Names()) || !strings.Contains(out, fmt.Sprintf("%d scenarios: %d ✓", len(check.Names()), len(check.Names()))) {
		t.Errorf("the lesson's design: exit %d\n%s%s", code, out, errOut)
	}
	lesson.stop(os.Interrupt)

	broken := startServe(t, bin, "--addr", "127.0.0.1:0", "--set", "lookup=after-seat-check", "--instance-addr", freeAddr(t), "--instance-addr", freeAddr(t))
	f := config(t, broken)
	out, errOut, code = runCheck(t, bin, "--config", f)
	want := "  ✗ The last seats                               told “409 Not enough seats left: 0 left, you asked for 2” for the booking that was made for them"
	if code != 1 || !strings.Contains(out, want+"\n") || !strings.Contains(out, "2 ✗") {
		t.Errorf("lookup=after-seat-check: exit %d, want 1 and\n%s\ngot:\n%s%s", code, want, out, errOut)
	}
	out, _, code = runCheck(t, bin, "--config", f, "--json", "--only", "last-seats,lost-answer")
	var res check.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if len(res.Rows) != 2 || res.Rows[0].Name != "lost-answer" || res.Rows[0].State != check.Pass || res.Rows[1].State != check.Fail ||
		res.Failed != 1 || len(res.Rows[1].Passages) != 2 || res.Rows[1].Passages[1].Status != 409 {
		t.Errorf("--json: %+v", res)
	}
	broken.stop(os.Interrupt)
}
