package train

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/internal/atomicfile"
)

// PlotName is the plot of a run's history beside its checkpoint.
const PlotName = "training.svg"

// WritePlot writes the plot of history h into the checkpoint directory dir,
// atomically (a reader sees the old plot or the new one).
func WritePlot(dir string, h []EpochStats) error {
	return atomicfile.Write(filepath.Join(dir, PlotName), PlotSVG(h), 0o644)
}

// PlotSVG draws the training loss (left axis) and the holdout MRR after
// each epoch (right axis, 0 to 1) per epoch as a standalone SVG.
func PlotSVG(h []EpochStats) []byte {
	const w, ht, left, right, top, bottom = 640.0, 360.0, 60.0, 60.0, 30.0, 40.0
	pw, ph := w-left-right, ht-top-bottom
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="12">`+"\n", w, ht)
	fmt.Fprintf(&sb, `<rect width="%g" height="%g" fill="white"/>`+"\n", w, ht)
	fmt.Fprintf(&sb, `<text x="%g" y="18" text-anchor="middle">training loss (blue, left) and holdout MRR (orange, right) per epoch</text>`+"\n", w/2)
	fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	maxLoss := 0.0
	for _, e := range h {
		maxLoss = math.Max(maxLoss, e.Loss)
	}
	if maxLoss <= 0 {
		maxLoss = 1
	}
	n := len(h)
	x := func(i int) float64 {
		if n <= 1 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(n-1)
	}
	for k := 0; k <= 4; k++ {
		y := top + ph*float64(k)/4
		fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="end">%.3g</text>`+"\n", left-4, y+4, maxLoss*(1-float64(k)/4))
		fmt.Fprintf(&sb, `<text x="%g" y="%g">%.2f</text>`+"\n", w-right+4, y+4, 1-float64(k)/4)
	}
	for i, e := range h {
		if n <= 10 || i%((n+9)/10) == 0 {
			fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle">%d</text>`+"\n", x(i), ht-bottom+16, e.Epoch+1)
		}
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle">epoch</text>`+"\n", left+pw/2, ht-6)
	line := func(color string, val func(EpochStats) (float64, bool)) {
		var pts []string
		for i, e := range h {
			if v, ok := val(e); ok {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), top+ph*(1-v)))
			}
		}
		if len(pts) == 0 {
			return
		}
		fmt.Fprintf(&sb, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		for _, p := range pts {
			xy := strings.Split(p, ",")
			fmt.Fprintf(&sb, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], color)
		}
	}
	line("#1f77b4", func(e EpochStats) (float64, bool) { return e.Loss / maxLoss, true })
	line("#ff7f0e", func(e EpochStats) (float64, bool) { return e.MRRAfter, e.Holdout > 0 })
	sb.WriteString("</svg>\n")
	return []byte(sb.String())
}
