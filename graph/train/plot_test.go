package train

import (
	"encoding/xml"
	"strings"
	"testing"
)

// The plot is well-formed XML with one point per epoch on each curve.
func TestPlotSVG(t *testing.T) {
	h := []EpochStats{{Epoch: 0, Loss: 2, MRRAfter: 0.2, Holdout: 5}, {Epoch: 1, Loss: 1, MRRAfter: 0.5, Holdout: 5}, {Epoch: 2, Loss: 0.5, MRRAfter: 0.7, Holdout: 5}}
	svg := string(PlotSVG(h))
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	if got := strings.Count(svg, "<circle"); got != 6 {
		t.Fatalf("%d points, want 6", got)
	}
	if got := strings.Count(string(PlotSVG(nil)), "<polyline"); got != 0 {
		t.Fatalf("empty history draws %d curves", got)
	}
}
