package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/learn-idempotency/learn/pgtemp/internal/owner"
	"github.com/moby/moby/client"
)

// The labels of learn's containers (see the package doc).
const (
	labelApp        = "learn.pgtemp"
	labelRun        = "learn.run"
	labelOwnerPID   = "learn.owner.pid"
	labelOwnerStart = "learn.owner.start"
	labelOwnerHost  = "learn.owner.host"
	labelOwnerBoot  = "learn.owner.boot"
)

// removeByLabel force-removes every container (running or not) with the
// label, with its anonymous volumes.
func removeByLabel(ctx context.Context, cli *client.Client, label string) error {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range list.Items {
		_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		if err != nil && !cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "is already in progress") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ownerLabels are the labels of a container this process makes in run runID.
func ownerLabels(runID string) map[string]string {
	l := map[string]string{
		labelApp:      "1",
		labelRun:      runID,
		labelOwnerPID: strconv.Itoa(os.Getpid()),
	}
	if t := owner.StartTicks(os.Getpid()); t != "" {
		l[labelOwnerStart] = t
	}
	if h, err := os.Hostname(); err == nil {
		l[labelOwnerHost] = h
	}
	if b := owner.BootID(); b != "" {
		l[labelOwnerBoot] = b
	}
	return l
}

// ownerGone reports whether the learn process that made a container with
// these labels has ended (its pid no longer runs, or runs a process that
// started at another time, or the machine rebooted since), and why. A
// container made on another host, or whose labels cannot be read, is never
// taken for an orphan: learn cannot tell, so it leaves it alone.
func ownerGone(labels map[string]string) (bool, string) {
	host, _ := os.Hostname()
	if was := labels[labelOwnerHost]; host == "" || was != host {
		return false, fmt.Sprintf("made by learn on another machine (%q)", was)
	}
	pid, err := strconv.Atoi(labels[labelOwnerPID])
	if err != nil || pid <= 0 {
		return false, fmt.Sprintf("its label %s=%q names no process", labelOwnerPID, labels[labelOwnerPID])
	}
	o := owner.Record{LearnPID: pid, LearnTicks: labels[labelOwnerStart], BootID: labels[labelOwnerBoot]}
	if gone, why := o.LearnGone(); gone {
		return true, why
	}
	return false, fmt.Sprintf("learn pid %d still runs", pid)
}

// Leftover is a container of learn's that Reap found.
type Leftover struct {
	Name     string // the container's name, e.g. "learn-postgres-1a2b3c4d5e6f7a8b"
	OwnerPID string // the learn process that made it
	Why      string // why it counts as an orphan, or why it was left alone
	Removed  bool   // removed now, because that process is gone
	Err      error  // why removing it failed
}

func (l Leftover) String() string {
	switch {
	case l.Err != nil:
		return fmt.Sprintf("could not remove container %s (%s): %v; remove it with `docker rm -f -v %s`", l.Name, l.Why, l.Err, l.Name)
	case l.Removed:
		return fmt.Sprintf("removed container %s: %s", l.Name, l.Why)
	}
	return fmt.Sprintf("left container %s alone: %s", l.Name, l.Why)
}

// reapContainers removes, with their volumes, the containers of learn processes
// that are gone (see ownerGone), and reports every container of learn's it
// saw.
func reapContainers(ctx context.Context, cli *client.Client, logf func(string, ...any)) ([]Leftover, error) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", labelApp+"=1")})
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, c := range list.Items {
		name := c.ID[:min(12, len(c.ID))]
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		gone, why := ownerGone(c.Labels)
		l := Leftover{Name: name, OwnerPID: c.Labels[labelOwnerPID], Why: why}
		if gone {
			_, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if err != nil && !cerrdefs.IsNotFound(err) {
				l.Err = err
			} else {
				l.Removed = true
			}
			logf("%s", l)
		}
		out = append(out, l)
	}
	return out, nil
}
