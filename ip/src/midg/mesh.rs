//! Tetrahedral meshes as MIDG2 holds them: vertices, elements (four vertex indices each,
//! positively oriented) and the face connectivity — each element's neighbour across each face
//! and that face's number there (`EToE`, `EToF`; a boundary face names its own element and face).
//! Faces are numbered as MIDG2 numbers them: 1 = (v1, v2, v3), 2 = (v1, v2, v4), 3 = (v2, v3, v4),
//! 4 = (v1, v3, v4) (0-based here).

use std::collections::HashMap;

use crate::Error;

/// The vertices of each face, as positions in the element's vertex list.
pub const FACE_VERTICES: [[usize; 3]; 4] = [[0, 1, 2], [0, 1, 3], [1, 2, 3], [0, 2, 3]];

/// A tetrahedral mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct TetMesh {
    /// Vertex coordinates.
    pub vertices: Vec<[f64; 3]>,
    /// Per element, its four vertices, ordered so that the element's volume is positive.
    pub elements: Vec<[u32; 4]>,
}

/// Each element's neighbour and the neighbour's face number across each face.
#[derive(Clone, Debug, PartialEq)]
pub struct Connectivity {
    /// `EToE[k][f]`: the element across face f of element k (k itself on the boundary).
    pub etoe: Vec<[u32; 4]>,
    /// `EToF[k][f]`: that face's number in the neighbour (f itself on the boundary).
    pub etof: Vec<[u8; 4]>,
}

impl Connectivity {
    /// Whether face `f` of element `k` lies on the boundary.
    pub fn boundary(&self, k: usize, f: usize) -> bool {
        self.etoe[k][f] as usize == k && self.etof[k][f] as usize == f
    }
}

/// Six times the signed volume of the tetrahedron `a, b, c, d`.
fn six_volume(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let (u, v, w) = ([b[0] - a[0], b[1] - a[1], b[2] - a[2]], [c[0] - a[0], c[1] - a[1], c[2] - a[2]], [d[0] - a[0], d[1] - a[1], d[2] - a[2]]);
    u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) + u[2] * (v[0] * w[1] - v[1] * w[0])
}

impl TetMesh {
    /// A mesh from vertices and elements in any orientation: each element whose volume is
    /// negative has its last two vertices swapped; a degenerate element or a vertex index out of
    /// range is an error naming the element.
    pub fn new(vertices: Vec<[f64; 3]>, elements: Vec<[u32; 4]>) -> Result<TetMesh, Error> {
        let mut elements = elements;
        for (k, e) in elements.iter_mut().enumerate() {
            if let Some(bad) = e.iter().find(|&&v| v as usize >= vertices.len()) {
                return Err(Error::Config(format!("element {k}: vertex {bad} is not one of the {} vertices", vertices.len())));
            }
            let v = e.map(|i| vertices[i as usize]);
            let six = six_volume(v[0], v[1], v[2], v[3]);
            let scale = v.iter().flat_map(|p| p.iter()).fold(0.0f64, |m, x| m.max(x.abs())).max(1.0);
            if six.abs() <= 1e-14 * scale.powi(3) {
                return Err(Error::Config(format!("element {k}: vertices {e:?} span no volume")));
            }
            if six < 0.0 {
                e.swap(2, 3);
            }
        }
        Ok(TetMesh { vertices, elements })
    }

    /// The unit cube cut into `n` × `n` × `n` sub-cubes, each into six tetrahedra around its
    /// main diagonal (Kuhn's subdivision, so faces match across sub-cubes): 6n³ elements.
    pub fn unit_cube(n: usize) -> Result<TetMesh, Error> {
        if !(1..=64).contains(&n) {
            return Err(Error::Config(format!("unit cube refinement {n}: allowed range is 1 ..= 64")));
        }
        let id = |i: usize, j: usize, k: usize| (i + (n + 1) * (j + (n + 1) * k)) as u32;
        let mut vertices = vec![];
        for k in 0..=n {
            for j in 0..=n {
                for i in 0..=n {
                    vertices.push([i as f64 / n as f64, j as f64 / n as f64, k as f64 / n as f64]);
                }
            }
        }
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        let mut elements = vec![];
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    for axes in orders {
                        let mut c = [i, j, k];
                        let mut e = [id(c[0], c[1], c[2]); 4];
                        for (step, &a) in axes.iter().enumerate() {
                            c[a] += 1;
                            e[step + 1] = id(c[0], c[1], c[2]);
                        }
                        elements.push(e);
                    }
                }
            }
        }
        TetMesh::new(vertices, elements)
    }

    /// The vertices of element `k`.
    pub fn corners(&self, k: usize) -> [[f64; 3]; 4] {
        self.elements[k].map(|v| self.vertices[v as usize])
    }

    /// The volume of element `k`.
    pub fn volume(&self, k: usize) -> f64 {
        let v = self.corners(k);
        six_volume(v[0], v[1], v[2], v[3]) / 6.0
    }

    /// Which element and face lies across every face; a face shared by more than two elements is
    /// an error.
    pub fn connect(&self) -> Result<Connectivity, Error> {
        let mut faces: HashMap<[u32; 3], Vec<(u32, u8)>> = HashMap::new();
        for (k, e) in self.elements.iter().enumerate() {
            for (f, fv) in FACE_VERTICES.iter().enumerate() {
                let mut key = fv.map(|i| e[i]);
                key.sort_unstable();
                faces.entry(key).or_default().push((k as u32, f as u8));
            }
        }
        let k = self.elements.len();
        let mut etoe: Vec<[u32; 4]> = (0..k as u32).map(|e| [e; 4]).collect();
        let mut etof: Vec<[u8; 4]> = vec![[0, 1, 2, 3]; k];
        for (key, sides) in &faces {
            match sides.as_slice() {
                [_] => {}
                [(a, fa), (b, fb)] => {
                    etoe[*a as usize][*fa as usize] = *b;
                    etof[*a as usize][*fa as usize] = *fb;
                    etoe[*b as usize][*fb as usize] = *a;
                    etof[*b as usize][*fb as usize] = *fa;
                }
                _ => return Err(Error::Config(format!("the face with vertices {key:?} belongs to {} elements", sides.len()))),
            }
        }
        Ok(Connectivity { etoe, etof })
    }
}
