package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress reports a long run on stderr: a redrawn bar on a terminal, a plain
// line every interval otherwise (CI logs, pipes). Quiet mode prints nothing.
// It is safe for concurrent Add calls.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	quiet    bool
	label    string
	unit     string
	total    int64 // 0: unknown
	done     int64
	start    time.Time
	last     time.Time
	interval time.Duration
	drawn    bool
	note     string // appended to each line (loss, bucket, ...)
}

// newProgress makes a reporter for env.Stderr. total may be 0 when unknown.
func newProgress(env *Env, label, unit string, total int64, quiet bool) *progress {
	p := &progress{w: env.Stderr, label: label, unit: unit, total: total, quiet: quiet,
		start: time.Now(), interval: 10 * time.Second}
	if f, ok := env.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
		p.interval = 200 * time.Millisecond
	}
	p.last = p.start
	return p
}

// Add records n more units done and redraws when due.
func (p *progress) Add(n int64) {
	if p == nil || p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	now := time.Now()
	if now.Sub(p.last) < p.interval {
		return
	}
	p.last = now
	p.draw(now, false)
}

// Done prints the final line (on a terminal it replaces the bar).
func (p *progress) Done() {
	if p == nil || p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.drawn && !p.tty {
		return // short runs print nothing in logs
	}
	p.draw(time.Now(), true)
}

// SetNote sets text shown after the counts on the next line drawn.
func (p *progress) SetNote(s string) {
	if p == nil || p.quiet {
		return
	}
	p.mu.Lock()
	p.note = s
	p.mu.Unlock()
}

func (p *progress) draw(now time.Time, final bool) {
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.done) / el
	}
	var line string
	if p.total > 0 {
		frac := float64(p.done) / float64(p.total)
		if frac > 1 {
			frac = 1
		}
		if p.tty {
			const width = 30
			n := int(frac * width)
			line = fmt.Sprintf("%s [%s%s] %5.1f%% %d/%d %s %.0f %s/s", p.label,
				strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, p.done, p.total, p.unit, rate, p.unit)
		} else {
			line = fmt.Sprintf("%s: %.1f%% %d/%d %s, %.0f %s/s, %.0fs", p.label, 100*frac, p.done, p.total, p.unit, rate, p.unit, el)
		}
	} else {
		line = fmt.Sprintf("%s: %d %s, %.0f %s/s, %.0fs", p.label, p.done, p.unit, rate, p.unit, el)
	}
	if p.total > 0 && rate > 0 && p.done < p.total && !final {
		line += fmt.Sprintf(", ETA %s", (time.Duration(float64(p.total-p.done)/rate) * time.Second).Round(time.Second))
	}
	if p.note != "" {
		line += ", " + p.note
	}
	p.drawn = true
	if p.tty {
		end := ""
		if final {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\r\033[K%s%s", line, end)
		return
	}
	fmt.Fprintln(p.w, line)
}
