//! Unstructured quadrilateral meshes in OP2's Airfoil layout (seed 002): nodes with
//! coordinates, cells of four nodes, interior edges (two nodes, the cells on either side) and
//! boundary edges (two nodes, one cell, a boundary code). [`generate`] makes an O-grid around an
//! airfoil-like body, with jittered interior nodes and every numbering shuffled, so the mesh
//! has the irregular memory access of a real unstructured mesh; [`read_op2`] reads OP2's
//! `new_grid.dat` when a user has it.

use crate::Error;
use weft_hdl::testbench::Rng;

/// An interior edge: its two nodes and the cells on either side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The edge's two node numbers.
    pub nodes: [u32; 2],
    /// The cell numbers on either side.
    pub cells: [u32; 2],
}

/// A boundary edge: its two nodes, its one cell and a boundary code (1 wall, 2 far field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoundaryEdge {
    /// The edge's two node numbers.
    pub nodes: [u32; 2],
    /// The number of the one cell it borders.
    pub cell: u32,
    /// The boundary code: 1 wall, 2 far field.
    pub bound: u32,
}

/// A quadrilateral mesh in OP2's Airfoil layout; every number indexes `x`, `cells`, `edges`
/// or `bedges` from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// Node coordinates `[x, y]`, one per node.
    pub x: Vec<[f64; 2]>,
    /// The four node numbers of each cell, in order round the cell.
    pub cells: Vec<[u32; 4]>,
    /// The interior edges.
    pub edges: Vec<Edge>,
    /// The boundary edges.
    pub bedges: Vec<BoundaryEdge>,
}

impl Mesh {
    /// The mesh as an application file sees it, under the names OP2's `airfoil.cpp` gives its
    /// sets, maps and data: sets `nodes`, `edges`, `bedges`, `cells`; maps `pedge`, `pecell`,
    /// `pbedge`, `pbecell`, `pcell`; data `p_x` (two coordinates per node) and `p_bound`.
    pub fn data(&self) -> crate::app::MeshData {
        let mut d = crate::app::MeshData::default();
        for (name, size) in [("nodes", self.x.len()), ("edges", self.edges.len()), ("bedges", self.bedges.len()), ("cells", self.cells.len())] {
            d.sets.insert(name.into(), size);
        }
        d.maps.insert("pedge".into(), (2, self.edges.iter().flat_map(|e| e.nodes).collect()));
        d.maps.insert("pecell".into(), (2, self.edges.iter().flat_map(|e| e.cells).collect()));
        d.maps.insert("pbedge".into(), (2, self.bedges.iter().flat_map(|b| b.nodes).collect()));
        d.maps.insert("pbecell".into(), (1, self.bedges.iter().map(|b| b.cell).collect()));
        d.maps.insert("pcell".into(), (4, self.cells.iter().flatten().copied().collect()));
        d.dats.insert("p_x".into(), (2, self.x.iter().flatten().copied().collect()));
        d.dats.insert("p_bound".into(), (1, self.bedges.iter().map(|b| b.bound as f64).collect()));
        d
    }
}

/// A random permutation of `0..n`.
fn permutation(rng: &mut Rng, n: usize) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.below(i as u64 + 1) as usize);
    }
    p
}

/// An O-grid of `around × out` cells (`around` ≥ 4 cells round the body, `out` ≥ 1 layers
/// outwards): the body is a symmetric airfoil-like ellipse of chord 1, the far field a circle of
/// radius 10; interior nodes are moved by up to 20 % of the local spacing; node, cell and edge
/// numbers are shuffled (seeded).
pub fn generate(around: usize, out: usize, seed: u64) -> Result<Mesh, Error> {
    if around < 4 {
        return Err(Error::Config(format!("mesh: around = {around} is out of range: allowed 4 or more cells round the body")));
    }
    if out < 1 {
        return Err(Error::Config("mesh: out = 0 is out of range: allowed 1 or more layers".to_string()));
    }
    let mut rng = Rng::new(seed);
    let rings = out + 1;
    // Node (i, j): angle i round the body, ring j outwards; i wraps.
    let id = |i: usize, j: usize| (j * around + i % around) as u32;
    let mut x = vec![[0.0; 2]; around * rings];
    for j in 0..rings {
        let t = j as f64 / out as f64;
        let radius_scale = (10f64).powf(t); // geometric spacing away from the body
        for i in 0..around {
            let a = 2.0 * std::f64::consts::PI * i as f64 / around as f64;
            // Body: x from 0 to 1, a 12 %-thick ellipse; far field: a circle round (0.5, 0).
            let (bx, by) = (0.5 + 0.5 * a.cos(), 0.06 * a.sin());
            let (fx, fy) = (0.5 + 10.0 * a.cos(), 10.0 * a.sin());
            let w = (radius_scale - 1.0) / 9.0;
            let p = [bx + w * (fx - bx), by + w * (fy - by)];
            x[id(i, j) as usize] = p;
        }
    }
    // Jitter interior nodes by up to 20 % of the distance to their nearest neighbour, which
    // keeps every cell convex enough not to fold.
    let grid = x.clone();
    let dist = |a: [f64; 2], b: [f64; 2]| ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt();
    for j in 1..out {
        for i in 0..around {
            let here = grid[id(i, j) as usize];
            let near = [id(i + 1, j), id(i + around - 1, j), id(i, j + 1), id(i, j - 1)].iter().map(|n| dist(here, grid[*n as usize])).fold(f64::MAX, f64::min);
            for c in &mut x[id(i, j) as usize] {
                *c += 0.2 * near * (rng.below(2001) as f64 / 1000.0 - 1.0) / std::f64::consts::SQRT_2;
            }
        }
    }
    let cell = |i: usize, j: usize| (j * around + i % around) as u32;
    let cells: Vec<[u32; 4]> = (0..out).flat_map(|j| (0..around).map(move |i| (i, j))).map(|(i, j)| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)]).collect();
    let mut edges = vec![];
    let mut bedges = vec![];
    for j in 0..out {
        for i in 0..around {
            // The radial edge between cell (i-1, j) and cell (i, j).
            edges.push(Edge { nodes: [id(i, j), id(i, j + 1)], cells: [cell(i + around - 1, j), cell(i, j)] });
            // The ring edge above cell (i, j): to cell (i, j+1), or the far field.
            if j + 1 < out {
                edges.push(Edge { nodes: [id(i, j + 1), id(i + 1, j + 1)], cells: [cell(i, j), cell(i, j + 1)] });
            } else {
                bedges.push(BoundaryEdge { nodes: [id(i + 1, j + 1), id(i, j + 1)], cell: cell(i, j), bound: 2 });
            }
            if j == 0 {
                bedges.push(BoundaryEdge { nodes: [id(i, 0), id(i + 1, 0)], cell: cell(i, 0), bound: 1 });
            }
        }
    }
    // Shuffle every numbering, as a partitioned, renumbered real mesh has.
    let (pn, pc) = (permutation(&mut rng, x.len()), permutation(&mut rng, cells.len()));
    let mut xs = vec![[0.0; 2]; x.len()];
    for (old, p) in x.iter().enumerate() {
        xs[pn[old] as usize] = *p;
    }
    let mut cs = vec![[0u32; 4]; cells.len()];
    for (old, c) in cells.iter().enumerate() {
        cs[pc[old] as usize] = c.map(|n| pn[n as usize]);
    }
    let order = permutation(&mut rng, edges.len());
    let mut es = vec![edges[0]; edges.len()];
    for (old, e) in edges.iter().enumerate() {
        es[order[old] as usize] = Edge { nodes: e.nodes.map(|n| pn[n as usize]), cells: e.cells.map(|c| pc[c as usize]) };
    }
    let bs = bedges.iter().map(|b| BoundaryEdge { nodes: b.nodes.map(|n| pn[n as usize]), cell: pc[b.cell as usize], bound: b.bound }).collect();
    Ok(Mesh { x: xs, cells: cs, edges: es, bedges: bs })
}

/// Reads OP2's `new_grid.dat`: a line `nnode ncell nedge nbedge`, then `x y` per node, four node
/// numbers per cell, `n1 n2 c1 c2` per edge, `n1 n2 c1 bound` per boundary edge.
pub fn read_op2(text: &str) -> Result<Mesh, Error> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let bad = |line: Option<usize>, message: String| Error::Input { what: "new_grid.dat", line, message };
    let mut next = |what: &str, count: usize| -> Result<(usize, Vec<f64>), Error> {
        let (n, line) = lines.next().ok_or_else(|| bad(None, format!("ends before {what}")))?;
        let v: Vec<f64> = line.split_whitespace().map(|t| t.parse::<f64>().map_err(|_| bad(Some(n + 1), format!("`{t}` in {what} is not a number")))).collect::<Result<_, _>>()?;
        if v.len() < count {
            return Err(bad(Some(n + 1), format!("{what} needs {count} numbers, has {}", v.len())));
        }
        Ok((n + 1, v))
    };
    let (_, head) = next("the header", 4)?;
    let [nnode, ncell, nedge, nbedge] = [0, 1, 2, 3].map(|k| head[k] as usize);
    let index = |line: usize, v: f64, limit: usize, what: &str| -> Result<u32, Error> {
        if v < 0.0 || v as usize >= limit || v.fract() != 0.0 {
            return Err(bad(Some(line), format!("{what} {v} is out of range: allowed 0..{limit}")));
        }
        Ok(v as u32)
    };
    let mut mesh = Mesh { x: vec![], cells: vec![], edges: vec![], bedges: vec![] };
    for _ in 0..nnode {
        let (_, v) = next("a node", 2)?;
        mesh.x.push([v[0], v[1]]);
    }
    for _ in 0..ncell {
        let (l, v) = next("a cell", 4)?;
        mesh.cells.push([index(l, v[0], nnode, "node")?, index(l, v[1], nnode, "node")?, index(l, v[2], nnode, "node")?, index(l, v[3], nnode, "node")?]);
    }
    for _ in 0..nedge {
        let (l, v) = next("an edge", 4)?;
        mesh.edges.push(Edge { nodes: [index(l, v[0], nnode, "node")?, index(l, v[1], nnode, "node")?], cells: [index(l, v[2], ncell, "cell")?, index(l, v[3], ncell, "cell")?] });
    }
    for _ in 0..nbedge {
        let (l, v) = next("a boundary edge", 4)?;
        mesh.bedges.push(BoundaryEdge { nodes: [index(l, v[0], nnode, "node")?, index(l, v[1], nnode, "node")?], cell: index(l, v[2], ncell, "cell")?, bound: v[3] as u32 });
    }
    Ok(mesh)
}

/// The mesh in OP2's `new_grid.dat` format.
pub fn write_op2(mesh: &Mesh) -> String {
    let mut s = format!("{} {} {} {}\n", mesh.x.len(), mesh.cells.len(), mesh.edges.len(), mesh.bedges.len());
    for p in &mesh.x {
        s.push_str(&format!("{:?} {:?}\n", p[0], p[1]));
    }
    for c in &mesh.cells {
        s.push_str(&format!("{} {} {} {}\n", c[0], c[1], c[2], c[3]));
    }
    for e in &mesh.edges {
        s.push_str(&format!("{} {} {} {}\n", e.nodes[0], e.nodes[1], e.cells[0], e.cells[1]));
    }
    for b in &mesh.bedges {
        s.push_str(&format!("{} {} {} {}\n", b.nodes[0], b.nodes[1], b.cell, b.bound));
    }
    s
}
