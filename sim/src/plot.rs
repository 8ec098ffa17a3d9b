//! Minimal, deterministic SVG line plots for benchmark reports (log-2 or linear x axis).

use std::fmt::Write;

/// One line of a [`Plot`].
pub struct Series {
    /// The legend entry (written into the SVG as is: no `<` or `&`).
    pub name: String,
    /// The points `(x, y)`, joined in this order; with a log-2 x axis every x must be positive.
    pub points: Vec<(f64, f64)>,
}

/// A line plot: a 640 × 400 SVG with a title, labelled axes, a tick at every x value of any
/// series, six y ticks from 0 to `y_max`, and a legend. The same plot gives the same bytes.
///
/// ```
/// use weft_sim::plot::{Plot, Series};
///
/// let plot = Plot {
///     title: "bandwidth".into(),
///     x_label: "packet bytes".into(),
///     y_label: "GB/s".into(),
///     log2_x: true,
///     y_max: 4.0,
///     series: vec![Series { name: "x1 link".into(), points: vec![(64.0, 1.0), (1024.0, 3.5)] }],
/// };
/// let svg = plot.svg();
/// assert!(svg.starts_with("<svg") && svg.contains("x1 link") && svg.ends_with("</svg>\n"));
/// ```
pub struct Plot {
    /// The title above the plot (written into the SVG as is, like every label).
    pub title: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' label.
    pub y_label: String,
    /// Places x on a log-2 scale (ticks still show the values themselves), else linear.
    pub log2_x: bool,
    /// The top of the y axis, which starts at 0; must be positive.
    pub y_max: f64,
    /// The lines, coloured in turn from a palette of six.
    pub series: Vec<Series>,
}

const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];

impl Plot {
    /// The plot as an SVG document, ending in a newline.
    pub fn svg(&self) -> String {
        let (w, h, left, right, top, bottom) = (640.0, 400.0, 70.0, 150.0, 40.0, 50.0);
        let xs: Vec<f64> = self.series.iter().flat_map(|s| s.points.iter().map(|p| self.x(p.0))).collect();
        let (x0, x1) = (xs.iter().cloned().fold(f64::MAX, f64::min), xs.iter().cloned().fold(f64::MIN, f64::max));
        let span = if x1 > x0 { x1 - x0 } else { 1.0 };
        let px = |x: f64| left + (self.x(x) - x0) / span * (w - left - right);
        let py = |y: f64| h - bottom - y / self.y_max * (h - top - bottom);
        let mut out = String::new();
        writeln!(out, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#).unwrap();
        writeln!(out, r#"<rect width="{w}" height="{h}" fill="white"/>"#).unwrap();
        writeln!(out, r#"<text x="{}" y="20" text-anchor="middle" font-size="14">{}</text>"#, w / 2.0, self.title).unwrap();
        writeln!(out, r#"<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="black"/>"#, h - bottom, w - right, h - bottom).unwrap();
        writeln!(out, r#"<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="black"/>"#, h - bottom).unwrap();
        for i in 0..=5 {
            let y = self.y_max * i as f64 / 5.0;
            writeln!(out, r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#, left - 6.0, py(y) + 4.0, trim(y)).unwrap();
            writeln!(out, r##"<line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#ddd"/>"##, py(y), w - right, py(y)).unwrap();
        }
        let mut ticks: Vec<f64> = self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
        ticks.sort_by(|a, b| a.partial_cmp(b).unwrap());
        ticks.dedup();
        for t in ticks {
            writeln!(out, r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#, px(t), h - bottom + 16.0, trim(t)).unwrap();
        }
        writeln!(out, r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#, (left + w - right) / 2.0, h - 10.0, self.x_label).unwrap();
        writeln!(out, r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#, h / 2.0, h / 2.0, self.y_label).unwrap();
        for (i, s) in self.series.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let points: Vec<String> = s.points.iter().map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1))).collect();
            writeln!(out, r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#, points.join(" ")).unwrap();
            let ly = top + 20.0 * i as f64;
            writeln!(out, r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/>"#, w - right + 10.0, w - right + 30.0).unwrap();
            writeln!(out, r#"<text x="{}" y="{}">{}</text>"#, w - right + 35.0, ly + 4.0, s.name).unwrap();
        }
        out.push_str("</svg>\n");
        out
    }

    fn x(&self, x: f64) -> f64 {
        if self.log2_x {
            x.log2()
        } else {
            x
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
