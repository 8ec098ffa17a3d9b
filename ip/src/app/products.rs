//! A `dense` loop's body: products `y = M * x` of a constant matrix `M` (R × C, declared with
//! `matrix`) and an element's vector `x`, gathered through every entry of a map (C entries of F
//! values each), into `y`, written through every entry of a map (R entries of F values):
//!
//! `y[i][f] = ((+0 + M[i][0]·x[0][f]) + M[i][1]·x[1][f]) + … + M[i][C−1]·x[C−1][f]`
//!
//! rounded after every operation, in column order: a plain loop's order, and the order of the
//! element-local dense operator ([`super::dense`]) the loop compiles to. This is how MIDG2
//! writes its volume derivatives (Dr, Ds, Dt over an element's nodes) and its lift (LIFT over
//! the element's face nodes).

use std::collections::BTreeMap;

use weft_hdl::pipeline::dsl::DslError;

use super::element::Element;
use super::program::Access;
use super::text::{At, LoopDecl, MatrixDecl};

/// A loop argument as the file names it: a `via map` argument stands for one internal argument
/// per entry of the map (`first` .. `first + entries`).
pub(super) struct Operand<'a> {
    pub name: &'a str,
    pub at: At,
    /// The first internal argument.
    pub first: usize,
    /// Entries of the map for a `via map` argument; `None` for any other argument.
    pub entries: Option<usize>,
    /// Values per entry.
    pub dim: usize,
    pub access: Access,
}

/// One product `y = M * x`.
#[derive(Clone, Debug)]
pub struct Product {
    /// The matrix's name.
    pub matrix: String,
    /// Rows R (entries of `y`).
    pub rows: usize,
    /// Columns C (entries of `x`).
    pub cols: usize,
    /// The matrix in the application's type, as bit patterns, row-major.
    pub entries: Vec<u64>,
    /// The internal argument of each column's operand (`x` through entry j of its map).
    pub x: Vec<usize>,
    /// The internal argument of each row's result.
    pub y: Vec<usize>,
    /// Values per entry, F: the product is applied to each of the F components.
    pub dim: usize,
    /// The names of `y` and `x` in the file.
    pub names: (String, String),
}

/// A dense loop's body: its products and the lanes (multipliers) each is folded over.
#[derive(Clone, Debug)]
pub struct DenseBody {
    /// Multipliers per product, P (1 ..= R).
    pub lanes: usize,
    /// The products, in the file's order.
    pub products: Vec<Product>,
}

impl DenseBody {
    /// The most columns and the most rows of any product: the entries gathered and written back.
    pub fn widest(&self) -> (usize, usize) {
        (self.products.iter().map(|p| p.cols).max().unwrap_or(0), self.products.iter().map(|p| p.rows).max().unwrap_or(0))
    }

    /// Runs the body on one element's buffers (one per internal argument).
    pub fn evaluate<T: Element>(&self, bufs: &mut [Vec<T>]) {
        for p in &self.products {
            for (i, &yi) in p.y.iter().enumerate() {
                for f in 0..p.dim {
                    let mut acc = T::zero();
                    for (j, &xj) in p.x.iter().enumerate() {
                        acc = acc + T::from_lane(p.entries[i * p.cols + j]) * bufs[xj][f];
                    }
                    bufs[yi][f] = acc;
                }
            }
        }
    }
}

/// Compiles `decl`'s body (after `dense`) over its operands and the application's matrices (bit
/// patterns, row-major). Every error names the line, the column and the rule.
pub(super) fn compile(decl: &LoopDecl, operands: &[Operand], matrices: &BTreeMap<String, (MatrixDecl, Vec<u64>)>) -> Result<DenseBody, DslError> {
    let (lanes, at) = decl.dense.expect("a dense loop");
    if let Some(o) = operands.iter().find(|o| o.entries.is_none()) {
        return Err(o.at.error(format!("`{}`: a dense loop's arguments are dats through every entry of a map (`name = dat via map access`)", o.name)));
    }
    let mut products: Vec<Product> = vec![];
    for (n, line) in &decl.body {
        let text = line.trim();
        let column = line.len() - line.trim_start().len() + 1;
        let here = At { line: *n, column };
        let parsed = text.split_once('=').and_then(|(y, rest)| rest.split_once('*').map(|(m, x)| (y.trim(), m.trim(), x.trim())));
        let Some((y, m, x)) = parsed else { return Err(here.error("a dense loop's line is a product `y = M * x`")) };
        let operand = |name: &str| operands.iter().find(|o| o.name == name).ok_or_else(|| here.error(format!("`{name}` is not an argument of loop `{}`", decl.name.text)));
        let (yo, xo) = (operand(y)?, operand(x)?);
        let (md, entries) = matrices.get(m).ok_or_else(|| here.error(format!("`{m}` is not a declared matrix")))?;
        let (ye, xe) = (yo.entries.unwrap_or(1), xo.entries.unwrap_or(1));
        if md.rows != ye || md.cols != xe {
            return Err(here.error(format!("`{m}` is {} × {}: `{y}` has {ye} entries and `{x}` {xe}; the rows must match `{y}`'s entries and the columns `{x}`'s", md.rows, md.cols)));
        }
        if yo.dim != xo.dim {
            return Err(here.error(format!("`{y}` has {} values an entry and `{x}` {}: a product keeps the values an entry", yo.dim, xo.dim)));
        }
        if yo.access != Access::Write {
            return Err(here.error(format!("`{y}` is {:?}: a product's result is a `write` argument", yo.access)));
        }
        if xo.access != Access::Read {
            return Err(here.error(format!("`{x}` is {:?}: a product's operand is a `read` argument", xo.access)));
        }
        if products.iter().any(|p| p.names.0 == y) {
            return Err(here.error(format!("`{y}` is the result of an earlier product")));
        }
        if products.iter().any(|p| p.names.1 == y) || products.iter().any(|p| p.names.0 == x) {
            return Err(here.error("a product reads the values from before the loop: no product reads another's result"));
        }
        if !(1..=md.rows).contains(&lanes) {
            return Err(at.error(format!("dense lanes {lanes}: allowed range is 1 ..= {} (the rows of `{m}`)", md.rows)));
        }
        products.push(Product {
            matrix: m.to_string(),
            rows: md.rows,
            cols: md.cols,
            entries: entries.clone(),
            x: (xo.first..xo.first + xe).collect(),
            y: (yo.first..yo.first + ye).collect(),
            dim: xo.dim,
            names: (y.to_string(), x.to_string()),
        });
    }
    if products.is_empty() {
        return Err(at.error(format!("dense loop `{}` has no product", decl.name.text)));
    }
    if let Some(o) = operands.iter().find(|o| o.access == Access::Write && !products.iter().any(|p| p.names.0 == o.name)) {
        return Err(o.at.error(format!("`{}` is written but no product sets it", o.name)));
    }
    if let Some(o) = operands.iter().find(|o| !matches!(o.access, Access::Read | Access::Write)) {
        return Err(o.at.error(format!("`{}` is {:?}: a dense loop reads operands and writes results", o.name, o.access)));
    }
    Ok(DenseBody { lanes, products })
}
