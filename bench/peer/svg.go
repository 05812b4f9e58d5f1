package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// seriesColors are the paths' colors in the figure.
// pathSlots is each path's place in a scenario's group of bars.
var pathSlots = map[string]int{pathDirect: 0, pathProxy: 1, pathMaskgate: 2, pathPortkey: 3}

var seriesColors = map[string]string{pathDirect: "#7f7f7f", pathProxy: "#2ca02c", pathMaskgate: "#1f77b4", pathPortkey: "#ff7f0e"}

// Figure geometry, in SVG user units.
const (
	svgWidth    = 980
	plotLeft    = 80
	plotRight   = 20
	panelHeight = 230
	latencyTop  = 100
	cpuTop      = latencyTop + panelHeight + 85
	svgHeight   = cpuTop + panelHeight + 70
)

// bar is one value of one series in one scenario's group; hi is the p99 whisker, zero
// for none.
type bar struct {
	value, hi  float64
	tip, label string
}

// panel is one chart: a log-scaled y axis and, for each series it shows, a bar per
// scenario (nil where it has none).
type panel struct {
	id, title, unit string
	top             float64
	series          []string
	bars            map[string][]*bar
	note            string
	labels          bool // write each bar's label above it
}

// SVG draws the report as two panels sharing their x axis, one group per scenario:
// latency (bar to p50, whisker to p99) for the four paths, and CPU per request for
// the three processes in the middle. Both y axes are logarithmic, the figures spanning
// several decades. It is plain SVG 1.1, written by hand.
func (r *Report) SVG(w io.Writer) error {
	lat := &panel{id: "latency", title: "Latency, send to last byte (ms, log scale): bar p50, whisker p99", unit: "ms",
		top: latencyTop, series: []string{pathDirect, pathProxy, pathMaskgate, pathPortkey}, bars: map[string][]*bar{}}
	cpu := &panel{id: "cpu", title: "Gateway process CPU time per request (log scale)", unit: "µs", labels: true,
		top: cpuTop, series: []string{pathProxy, pathMaskgate, pathPortkey}, bars: map[string][]*bar{},
		note: "direct has no gateway process"}
	for _, s := range r.Scenarios {
		for _, name := range lat.series {
			lat.bars[name] = append(lat.bars[name], nil)
			cpu.bars[name] = append(cpu.bars[name], nil)
		}
		for _, p := range s.Paths {
			i := len(lat.bars[p.Path]) - 1
			if i < 0 {
				continue
			}
			where := fmt.Sprintf("%s, %s at %g/s", pathTitles[p.Path], s.label(), s.Rate)
			if p.OK > 0 {
				lat.bars[p.Path][i] = &bar{value: ms(p.Latency.P50), hi: ms(p.Latency.P99),
					tip: fmt.Sprintf("%s: p50 %s ms, p99 %s ms", where, msText(p.Latency.P50), msText(p.Latency.P99))}
			}
			if p.CPUPerRequest != nil && *p.CPUPerRequest > 0 {
				cpu.bars[p.Path][i] = &bar{value: float64(*p.CPUPerRequest) / float64(time.Microsecond),
					tip:   fmt.Sprintf("%s: %s CPU per request", where, cpuText(*p.CPUPerRequest)),
					label: cpuText(*p.CPUPerRequest)}
			}
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="#ffffff"/>
`, svgWidth, svgHeight, svgWidth, svgHeight)
	title := "direct, a bare proxy, maskgate and Portkey to one canned upstream"
	if !r.Started.IsZero() {
		title += ", " + r.Started.UTC().Format("2006-01-02")
	}
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", plotLeft, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="42" fill="#555">%s</text>`+"\n", plotLeft,
		esc(fmt.Sprintf("open loop, %d rounds of %s per path; %d CPUs shared with the load generator and the upstream", r.Rounds, r.Round, r.NumCPU)))
	b.WriteString(`<g id="legend">` + "\n")
	for i, name := range lat.series {
		x := plotLeft + i*130
		fmt.Fprintf(&b, `<rect x="%d" y="54" width="12" height="12" fill="%s"/><text x="%d" y="64">%s</text>`+"\n",
			x, seriesColors[name], x+17, esc(pathTitles[name]))
	}
	b.WriteString("</g>\n")

	groups := make([]string, len(r.Scenarios))
	for i, s := range r.Scenarios {
		groups[i] = fmt.Sprintf("%d tools %s|%g/s", s.Tools, s.kind(), s.Rate)
	}
	for _, p := range []*panel{lat, cpu} {
		p.draw(&b, groups)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// draw writes the panel: title, decade grid, one group per scenario.
func (p *panel) draw(b *strings.Builder, groups []string) {
	plotW := float64(svgWidth - plotLeft - plotRight)
	bottom := p.top + panelHeight
	lo, hi := p.decades()
	y := func(v float64) float64 {
		f := (math.Log10(v) - lo) / (hi - lo)
		return bottom - f*panelHeight
	}

	fmt.Fprintf(b, `<g id="panel-%s">`+"\n", p.id)
	fmt.Fprintf(b, `<text x="%d" y="%.1f" font-weight="bold">%s</text>`+"\n", plotLeft, p.top-10, esc(p.title))
	for d := lo; d <= hi; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if math.Log10(v) > hi+1e-9 {
				break
			}
			yy := y(v)
			if m == 1 {
				fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#cccccc"/>`+"\n", plotLeft, yy, svgWidth-plotRight, yy)
				fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#333">%s</text>`+"\n", plotLeft-6, yy+4, esc(axisLabel(v, p.unit)))
			} else {
				fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eeeeee"/>`+"\n", plotLeft, yy, svgWidth-plotRight, yy)
			}
		}
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`+"\n", plotLeft, p.top, plotLeft, bottom)
	fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333"/>`+"\n", plotLeft, bottom, svgWidth-plotRight, bottom)

	n := max(len(groups), 1)
	groupW := plotW / float64(n)
	barW := groupW * 0.8 / float64(len(pathSlots))
	for i, g := range groups {
		cx := plotLeft + groupW*(float64(i)+0.5)
		line1, line2, _ := strings.Cut(g, "|")
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", cx, bottom+16, esc(line1))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`+"\n", cx, bottom+30, esc(line2))
	}
	// Every path keeps its slot in a group, present in this panel or not, so that the
	// two panels' bars line up.
	for _, name := range p.series {
		fmt.Fprintf(b, `<g class="series" data-series="%s" data-panel="%s" fill="%s" stroke="%s">`+"\n", name, p.id, seriesColors[name], seriesColors[name])
		for i, bv := range p.bars[name] {
			if bv == nil || bv.value <= 0 {
				continue
			}
			x := plotLeft + groupW*float64(i) + groupW*0.1 + barW*float64(pathSlots[name])
			top := math.Min(math.Max(y(bv.value), p.top), bottom)
			fmt.Fprintf(b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" stroke="none"><title>%s</title></rect>`+"\n",
				x+1, top, barW-2, bottom-top, esc(bv.tip))
			if p.labels && bv.label != "" {
				fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" fill="#333" stroke="none">%s</text>`+"\n",
					x+barW/2, top-4, esc(bv.label))
			}
			if bv.hi > 0 {
				yh := math.Max(y(bv.hi), p.top)
				cx := x + barW/2
				fmt.Fprintf(b, `<line class="p99" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000" stroke-width="1.2"/>`+"\n", cx, top, cx, yh)
				fmt.Fprintf(b, `<line class="p99" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000" stroke-width="1.2"/>`+"\n", cx-barW/4, yh, cx+barW/4, yh)
			}
		}
		b.WriteString("</g>\n")
	}
	if p.note != "" {
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", svgWidth-plotRight, p.top-10, esc(p.note))
	}
	b.WriteString("</g>\n")
}

// decades is the panel's y range as powers of ten: from the decade below its smallest
// value to the one above its largest, at least one decade.
func (p *panel) decades() (lo, hi float64) {
	minV, maxV := math.Inf(1), math.Inf(-1)
	for _, bars := range p.bars {
		for _, bv := range bars {
			if bv == nil || bv.value <= 0 {
				continue
			}
			minV = math.Min(minV, bv.value)
			maxV = math.Max(maxV, math.Max(bv.value, bv.hi))
		}
	}
	if math.IsInf(minV, 1) {
		return 0, 1
	}
	lo, hi = math.Floor(math.Log10(minV)), math.Ceil(math.Log10(maxV))
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// axisLabel writes a decade's value: "0.1 ms", "10 ms", "1 s", "100 µs", "1 ms".
func axisLabel(v float64, unit string) string {
	switch {
	case unit == "ms" && v >= 1000:
		return fmt.Sprintf("%g s", v/1000)
	case unit == "µs" && v >= 1000:
		return fmt.Sprintf("%g ms", v/1000)
	}
	return fmt.Sprintf("%g %s", v, unit)
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func esc(s string) string { return xmlEscaper.Replace(s) }
