package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Plots are hand-written SVG: a grouped bar chart of computed tokens per session and a
// hit-rate-per-turn line chart, small and dependency-free.

var strategyColor = map[string]string{
	"eager": "#7f7f7f", "remove": "#d62728", "mask": "#1f77b4",
	"allowed_tools": "#2ca02c", "validate": "#ff7f0e", "auto": "#9467bd",
}

func color(st string) string {
	if c, ok := strategyColor[st]; ok {
		return c
	}
	return "#000000"
}

const (
	plotW, plotH                       = 760, 380
	marginL, marginR, marginT, marginB = 70, 150, 40, 60
)

// writePlots writes the SVGs for rep into dir and returns their file names.
func writePlots(rep *Report, dir string) ([]string, error) {
	var names []string
	for _, n := range rep.Settings.Catalogs {
		name := fmt.Sprintf("computed-%d.svg", n)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(computedPlot(rep, n)), 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
		for _, sc := range rep.Settings.Scenarios {
			name := fmt.Sprintf("hitrate-%d-%s.svg", n, sc)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(hitRatePlot(rep, n, sc)), 0o644); err != nil {
				return nil, err
			}
			names = append(names, name)
		}
	}
	return names, nil
}

type bar struct {
	group, strategy string
	value           float64
}

// computedPlot is computed tokens per session for each scenario (groups) and strategy
// (bars), on a log scale.
func computedPlot(rep *Report, n int) string {
	var groups []string
	var bars []bar
	for _, sc := range rep.Settings.Scenarios {
		labels := []string{sc}
		if sc == ScenarioProfile {
			labels = []string{sc + " #1", sc + " #2+"}
		}
		groups = append(groups, labels...)
		for _, r := range rep.Runs {
			if r.Catalog != n || r.Scenario != sc {
				continue
			}
			if len(labels) == 2 {
				bars = append(bars, bar{labels[0], r.Strategy, float64(r.ComputedFirst)}, bar{labels[1], r.Strategy, r.ComputedLater})
			} else {
				bars = append(bars, bar{labels[0], r.Strategy, r.ComputedPerSession})
			}
		}
	}
	lo, hi := math.Inf(1), 1.0
	for _, b := range bars {
		if b.value > 0 {
			lo, hi = math.Min(lo, b.value), math.Max(hi, b.value)
		}
	}
	if math.IsInf(lo, 1) {
		lo = 1
	}
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	iw, ih := float64(plotW-marginL-marginR), float64(plotH-marginT-marginB)
	y := func(v float64) float64 {
		if v <= 0 {
			return float64(marginT) + ih
		}
		return float64(marginT) + ih*(1-(math.Log10(v)-d0)/(d1-d0))
	}
	var s strings.Builder
	svgOpen(&s, fmt.Sprintf("Computed prompt tokens per session, %d tools (log scale)", n))
	for d := d0; d <= d1; d++ {
		yy := y(math.Pow(10, d))
		fmt.Fprintf(&s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", marginL, yy, plotW-marginR, yy)
		fmt.Fprintf(&s, `<text x="%d" y="%.1f" text-anchor="end" font-size="11">%s</text>`+"\n", marginL-6, yy+4, thousands(math.Pow(10, d)))
	}
	sts := rep.Settings.Strategies
	gw := iw / float64(max(len(groups), 1))
	bw := gw * 0.8 / float64(max(len(sts), 1))
	for gi, g := range groups {
		x0 := float64(marginL) + gw*float64(gi) + gw*0.1
		for si, st := range sts {
			for _, b := range bars {
				if b.group == g && b.strategy == st {
					top := y(b.value)
					fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
						x0+bw*float64(si), top, bw*0.9, float64(marginT)+ih-top, color(st), g, st, thousands(b.value))
				}
			}
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle" font-size="12">%s</text>`+"\n", x0+gw*0.4, plotH-marginB+18, esc(g))
	}
	axes(&s, "tokens per session")
	legend(&s, sts)
	s.WriteString("</svg>\n")
	return s.String()
}

// hitRatePlot is each turn's hit rate by strategy, sessions one after another.
func hitRatePlot(rep *Report, n int, sc string) string {
	iw, ih := float64(plotW-marginL-marginR), float64(plotH-marginT-marginB)
	var runs []RunResult
	turns := 0
	for _, r := range rep.Runs {
		if r.Catalog == n && r.Scenario == sc {
			runs = append(runs, r)
			t := 0
			for _, ss := range r.Sessions {
				t += len(ss.Turns)
			}
			turns = max(turns, t)
		}
	}
	x := func(i int) float64 { return float64(marginL) + iw*float64(i)/float64(max(turns-1, 1)) }
	y := func(v float64) float64 { return float64(marginT) + ih*(1-v) }
	var s strings.Builder
	svgOpen(&s, fmt.Sprintf("Hit rate per turn, %d tools, %s", n, sc))
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		fmt.Fprintf(&s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", marginL, y(v), plotW-marginR, y(v))
		fmt.Fprintf(&s, `<text x="%d" y="%.1f" text-anchor="end" font-size="11">%.0f%%</text>`+"\n", marginL-6, y(v)+4, 100*v)
	}
	if len(runs) > 0 && len(runs[0].Sessions) > 1 {
		i := 0
		for _, ss := range runs[0].Sessions[:len(runs[0].Sessions)-1] {
			i += len(ss.Turns)
			fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#eee" stroke-dasharray="3,3"/>`+"\n", x(i), marginT, x(i), y(0))
		}
	}
	var sts []string
	for _, r := range runs {
		sts = append(sts, r.Strategy)
		var pts []string
		i := 0
		for _, ss := range r.Sessions {
			for _, t := range ss.Turns {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(t.HitRate())))
				i++
			}
		}
		fmt.Fprintf(&s, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`+"\n", color(r.Strategy), strings.Join(pts, " "), r.Strategy)
	}
	fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle" font-size="12">turn (sessions one after another)</text>`+"\n", float64(marginL)+iw/2, plotH-marginB+36)
	axes(&s, "cached / prompt")
	legend(&s, sts)
	s.WriteString("</svg>\n")
	return s.String()
}

func svgOpen(s *strings.Builder, title string) {
	fmt.Fprintf(s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(s, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", plotW, plotH)
	fmt.Fprintf(s, `<text x="%d" y="24" font-size="15">%s</text>`+"\n", marginL, esc(title))
}

func axes(s *strings.Builder, ylabel string) {
	fmt.Fprintf(s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", marginL, marginT, marginL, plotH-marginB)
	fmt.Fprintf(s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000"/>`+"\n", marginL, plotH-marginB, plotW-marginR, plotH-marginB)
	fmt.Fprintf(s, `<text transform="translate(16 %d) rotate(-90)" text-anchor="middle" font-size="12">%s</text>`+"\n", marginT+(plotH-marginT-marginB)/2, esc(ylabel))
}

func legend(s *strings.Builder, sts []string) {
	for i, st := range sts {
		yy := marginT + 10 + 20*i
		fmt.Fprintf(s, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", plotW-marginR+14, yy-10, color(st))
		fmt.Fprintf(s, `<text x="%d" y="%d" font-size="12">%s</text>`+"\n", plotW-marginR+32, yy, esc(st))
	}
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
